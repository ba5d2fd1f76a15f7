"""A per-user, content-keyed file cache for what the arm generates: URDFs and settled scenes.

Why: the arm used to write its URDFs into a fresh `tempfile.mkdtemp` folder per process, and
those folders piled up (nothing removed them on exit, errors or signals). Scene generation
(drop 15 objects, settle, measure visibility) is deterministic and costs ~0.5-1 s per episode.
Keying every entry by its content (or by everything that determines it, including the source of
the generator) makes entries reusable across processes and means a stale entry can never be
read: a change gives a new key. Writes are atomic (temp file + os.replace in the same folder), so
concurrent workers never see half a file and an interrupted write leaves at most one orphan
`*.tmp` that the next write of the same key replaces.

Location: $BT_GRASP_CACHE_DIR, else $XDG_CACHE_HOME/bt_grasp, else ~/.cache/bt_grasp; if that
cannot be created, <tmp>/bt_grasp-<uid>. Set BT_GRASP_SCENE_CACHE=off to always regenerate scenes.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

_ROOT: dict[str, Path] = {}


def cache_root() -> Path:
    """The cache folder (created on first use); re-read when BT_GRASP_CACHE_DIR changes."""
    env = os.environ.get("BT_GRASP_CACHE_DIR")
    if env in _ROOT:
        return _ROOT[env]  # type: ignore[index]
    if env:
        candidates = [Path(env)]
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        candidates = [Path(xdg) / "bt_grasp" if xdg else Path.home() / ".cache" / "bt_grasp",
                      Path(tempfile.gettempdir()) / f"bt_grasp-{_uid()}"]
    for c in candidates:
        try:
            c.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(c, os.W_OK):
            _ROOT[env] = c  # type: ignore[index]
            return c
    raise OSError(f"no writable cache folder among {', '.join(map(str, candidates))} (set BT_GRASP_CACHE_DIR)")


def _uid() -> str:
    getuid = getattr(os, "getuid", None)
    return str(getuid()) if getuid is not None else os.environ.get("USERNAME", "user")


def content_key(*parts: object) -> str:
    """A short stable hash of the parts' reprs (callers pass plain data only)."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:20]


def source_digest(*modules: str) -> str:
    """Hash of the given modules' source files: part of a key whose value those modules compute."""
    import importlib.util

    h = hashlib.sha256()
    for name in modules:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
        h.update(name.encode())
        h.update(Path(origin).read_bytes() if origin and os.path.exists(origin) else b"?")
    return h.hexdigest()[:20]


def write_atomic(path: Path, data: bytes) -> Path:
    """Write `data` to `path` so that readers see either nothing or the whole file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def cached_text_file(folder: str, stem: str, suffix: str, text: str) -> Path:
    """`<cache>/<folder>/<stem>-<hash of text><suffix>`, written once and reused by every process."""
    path = cache_root() / folder / f"{stem}-{content_key(text)}{suffix}"
    if not path.exists() or path.read_text() != text:
        write_atomic(path, text.encode())
    return path
