"""Keep third-party start-up banners off the terminal unless `--verbose`.

pybullet prints "pybullet build time: ..." from C at import. C stdio buffers it when stdout is a
pipe, so it would surface at exit, after the result line or in front of a one-line error. We
point fd 1 and 2 at /dev/null around the import and flush C's buffers before putting them back.
`BT_GRASP_VERBOSE=1` (set by `bt-grasp --verbose`, inherited by worker processes) keeps them.
"""

from __future__ import annotations

import ctypes
import os
import sys

VERBOSE_ENV = "BT_GRASP_VERBOSE"


def verbose() -> bool:
    return os.environ.get(VERBOSE_ENV, "") not in ("", "0")


def set_verbose(on: bool) -> None:
    """Record the choice in the environment so spawned workers follow it."""
    if on:
        os.environ[VERBOSE_ENV] = "1"
    else:
        os.environ.pop(VERBOSE_ENV, None)


def _flush_c_stdio() -> None:
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):  # no C library handle on this platform: nothing buffered to lose
        pass


def import_pybullet_quietly() -> None:
    """Import pybullet now, without its banner (a no-op if verbose, imported, or not installed)."""
    if verbose() or "pybullet" in sys.modules:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        try:
            import pybullet  # noqa: F401
        except ImportError:
            pass
        _flush_c_stdio()
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, devnull):
            os.close(fd)
