"""A wall-clock limit on each call a leaf makes into its driver and perceiver.

Python cannot stop a thread: a call that never returns can only be waited for, not killed. So a
limited call runs on a worker thread and the caller waits at most `limit` seconds. Past it the
call is abandoned: its thread is left to finish or hang on its own (a daemon thread, so it never
keeps the process alive; whatever it returns later is dropped), a fresh worker takes the next
calls, and the caller gets NotResponding. The runner then halts the tree, stops the driver and
decides WAIT_CLARIFY "driver not responding: ...".

One worker per driver serves every call, one at a time, so a driver still sees a single caller
(PyBullet and real robot APIs expect one) and the same thread across episodes. A driver whose
resources belong to the thread that made it declares `thread_bound = True` (the MuJoCo arm: its
EGL context); its calls run on the caller's thread, without a wall-clock limit.
"""

from __future__ import annotations

import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from bt_grasp.drivers.capabilities import ThreadBound

T = TypeVar("T")

DEFAULT_CALL_LIMIT_S = 30.0  # the least wall time one call gets when the profile sets none
SETUP_LIMIT_S = 120.0  # reset(): a simulator builds its scene; a robot homes


class NotResponding(RuntimeError):
    """A driver or perceiver call gave no answer within its wall-clock limit (or was cancelled)."""


def _done() -> None:
    """What a finished job's function becomes."""


class _Job:
    def __init__(self, fn: Callable[[], Any]) -> None:
        self.fn = fn
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None
        self.cancelled: str | None = None


class _Worker:
    """A daemon thread running jobs in order until it is retired."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name="bt-grasp-driver-call", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            try:
                job.value = job.fn()
            except BaseException as exc:  # handed to the caller, who decides what it means
                job.error = exc
            job.fn = _done  # hold nothing of the run (its driver) while waiting for the next call
            job.done.set()
            del job

    def retire(self) -> None:
        self.jobs.put(None)


class CallLimiter:
    """Runs calls on one worker thread, waiting at most a limit for each (see the module doc)."""

    def __init__(self, inline: bool = False) -> None:
        self.inline = inline  # every call runs on the caller's thread, unlimited (a thread-bound driver)
        self._worker: _Worker | None = None
        self._current: _Job | None = None
        self._lock = threading.Lock()

    def call(self, fn: Callable[[], T], limit: float | None, what: str) -> T:
        """fn() on the worker, its exception re-raised here; NotResponding after `limit` seconds
        (None: no limit, run here). A call made from inside a call runs inline."""
        worker = self._worker
        if limit is None or self.inline or (worker is not None and threading.current_thread() is worker.thread):
            return fn()
        with self._lock:
            if self._worker is None:
                self._worker = _Worker()
                weakref.finalize(self, self._worker.retire)  # a forgotten limiter ends its thread
            job = self._current = _Job(fn)
            self._worker.jobs.put(job)
        finished = job.done.wait(limit)
        with self._lock:
            self._current = None
            if not finished or job.cancelled is not None:
                self._abandon()
        if job.cancelled is not None:
            raise NotResponding(f"{what} cancelled: {job.cancelled}")
        if not finished:
            raise NotResponding(f"driver not responding: {what} gave no answer within {limit:g} s")
        if job.error is not None:
            raise job.error
        return job.value  # type: ignore[no-any-return]

    def cancel(self, reason: str) -> bool:
        """Stop waiting for the call in progress (it raises NotResponding "... cancelled: reason");
        True if there was one."""
        with self._lock:
            job = self._current
            if job is None or job.done.is_set():
                return False
            job.cancelled = reason
            job.done.set()
            return True

    @property
    def busy(self) -> bool:
        """Is a call in progress?"""
        return self._current is not None

    def _abandon(self) -> None:
        """Leave the stuck worker to itself (it exits when its call returns, if ever)."""
        if self._worker is not None:
            self._worker.retire()
            self._worker = None

    def close(self) -> None:
        """Retire the worker thread (a later call starts a new one)."""
        with self._lock:
            self._abandon()


_BY_DRIVER: weakref.WeakKeyDictionary[Any, CallLimiter] = weakref.WeakKeyDictionary()


def limiter_for(driver: Any) -> CallLimiter:
    """The limiter (and so the worker thread) of `driver`, the same across its episodes; a driver
    that cannot be weakly referenced or hashed gets a fresh one. A driver declaring
    `thread_bound = True` (its resources belong to the thread that made it: an EGL context) gets
    an inline one: its calls have no wall-clock limit."""
    inline = isinstance(driver, ThreadBound) and bool(driver.thread_bound)
    try:
        found = _BY_DRIVER.get(driver)
        if found is None:
            found = _BY_DRIVER[driver] = CallLimiter(inline)
        return found
    except TypeError:
        return CallLimiter(inline)


def call_limit(profile: Any, max_ticks: int) -> float:
    """The wall-clock limit of one call of a node type spanning at most `max_ticks` ticks: the
    profile's `call_timeout_s` if set, else the longer of max_ticks control periods and
    DEFAULT_CALL_LIMIT_S (a simulator may run slower than real time; a stuck call is what is
    caught, not a slow one)."""
    configured = getattr(profile, "call_timeout_s", None)
    if configured is not None:
        return float(configured)
    period = float(getattr(profile, "control_period_s", 0.05) or 0.05)
    return max(max_ticks * period, DEFAULT_CALL_LIMIT_S)
