"""One BLAS / OpenMP thread per process, for benchmarks and their worker processes.

Why: benchmark workers already fill the cores, and N workers each spawning N BLAS threads
oversubscribe them (measured: episodes ~30 % slower with 2 workers); a single-core timing run
means one thread too. The libraries read these variables once, when they load, so
`use_one_thread()` must run before numpy (or anything importing it) is imported. This module
imports nothing that does.

A value already in the environment wins (a user may export OMP_NUM_THREADS=4 on purpose).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def single_thread_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of `base` (default: empty) with each of THREAD_VARS it lacks set to "1": the
    environment to give a child process (e.g. Ray's runtime_env env_vars)."""
    env = dict(base or {})
    for key in THREAD_VARS:
        env.setdefault(key, "1")
    return env


def use_one_thread() -> None:
    """Set each of THREAD_VARS not already in os.environ to "1", for this process and the
    processes it starts. Call before numpy is imported."""
    for key, value in single_thread_env().items():
        os.environ.setdefault(key, value)
