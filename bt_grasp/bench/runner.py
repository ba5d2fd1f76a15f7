"""The benchmark loop: trees × perception × lighting × seeds × episodes, one JSONL line each.

Why this shape:
- One record per episode, appended and flushed as it finishes, keyed by
  (tree, perception, lighting, image size, seed, episode): a killed or extended run is resumed by
  running the same command again — finished keys are skipped.
- Each worker process builds its own PyBullet DIRECT client per (perception, lighting, size) and
  reuses it across episodes (reset() rebuilds the scene from the episode seed, so reuse does not
  change results); the perceiver is rebuilt per episode because the geometric one tracks ids
  across frames and must not carry state from one scene to the next.
- Episode seed = base seed + 1000 × episode index (the driver's rule), so every method sees the
  same scene for the same (seed, episode, lighting).
- Scoring reads simulator ground truth (held object, basket contents, instance ids of located
  masks) through bt_grasp.bench.instrument; the tree only ever sees perception.

This module runs the loop (local processes or Ray, progress, appending); the tasks are in
bench.tasks, one episode in bench.worker, its scoring in bench.score, reading the file back in
bench.results.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bt_grasp.bench.results import drop_torn_line, finished_keys, load_records
from bt_grasp.bench.tasks import Task
from bt_grasp.bench.worker import close_worlds, run_task
from bt_grasp.errors import UserError
from bt_grasp.outputs import check_folder, output_error
from bt_grasp.threads import single_thread_env, use_one_thread


class WorkerDied(Exception):
    """A worker process ended without its result (killed, out of memory): one line, not a
    traceback; the records already written stay and a re-run resumes from them."""


class Progress:
    """A plain stderr progress bar (no dependency); one line per ~5 % when stderr is not a tty."""

    def __init__(self, total: int, done: int = 0, stream: Any = None) -> None:
        self.total, self.done, self.start = total, done, time.perf_counter()
        self.new = 0
        self.ok = 0
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last_pct = -1

    def update(self, rec: dict[str, Any]) -> None:
        self.done += 1
        self.new += 1
        self.ok += bool(rec.get("task_success"))
        pct = int(100 * self.done / max(1, self.total))
        if not self.tty and pct // 5 == self._last_pct // 5 and self.done < self.total:
            return
        self._last_pct = pct
        el = time.perf_counter() - self.start
        rate = el / max(1, self.new)
        eta = rate * (self.total - self.done)
        bar = "#" * (pct // 4) + "-" * (25 - pct // 4)
        msg = (f"[{bar}] {self.done}/{self.total} {pct:3d}% | task ok {self.ok}/{self.new} | "
               f"{rate:.1f} s/ep (all workers) | eta {eta / 60:.1f} min")
        self.stream.write(("\r" + msg) if self.tty else (msg + "\n"))
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def exit_with_parent(poll_s: float = 1.0) -> None:
    """Make this worker process exit when the process that started it is gone.

    Why: a benchmark stopped with SIGTERM or SIGKILL runs no clean-up, and its pool workers would
    go on running (and queueing) episodes nobody will record. A daemon thread compares the
    parent id with the one seen at start."""
    import threading

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _worker_start() -> None:
    """Pool initializer: pybullet imported without its banner, and tied to the parent's life."""
    from bt_grasp.quiet import import_pybullet_quietly

    exit_with_parent()
    import_pybullet_quietly()


def _local_iter(tasks: list[Task], workers: int) -> Iterator[dict[str, Any]]:
    if workers <= 1:
        try:
            for t in tasks:
                yield run_task(t)
        finally:
            close_worlds()
        return
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    # spawn: a fresh interpreter per worker, so no PyBullet client state is inherited by fork;
    # the children inherit the environment, so set the thread caps before they start
    use_one_thread()
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"),
                               initializer=_worker_start)
    futures = [pool.submit(run_task, t) for t in tasks]
    try:
        for f in as_completed(futures):
            try:
                result = f.result()
            except BrokenProcessPool:
                raise WorkerDied("a worker process died (killed, or out of memory)") from None
            yield result
    finally:
        # on Ctrl-C / a consumer error: drop queued episodes and do not wait for running ones
        # (finished episodes are already in the results file; a rerun resumes)
        pool.shutdown(wait=False, cancel_futures=True)


def _ray_iter(tasks: list[Task], workers: int) -> Iterator[dict[str, Any]]:
    try:
        import ray
    except ImportError:
        from bt_grasp.errors import BackendUnavailable

        raise BackendUnavailable("--backend ray needs Ray: pip install 'bt_grasp[ray]'") from None
    started = False
    if not ray.is_initialized():
        ray.init(num_cpus=max(1, workers), include_dashboard=False, log_to_driver=False,
                 ignore_reinit_error=True, runtime_env={"env_vars": single_thread_env()})
        started = True
    remote = ray.remote(num_cpus=1)(run_task)
    try:
        pending = [remote.remote(t) for t in tasks]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                yield ray.get(ref)
    finally:
        if started:
            ray.shutdown()


def _append(fd: int, out: Path, rec: dict[str, Any]) -> None:
    """One record as one line in one write (O_APPEND): a kill leaves whole lines, or a torn
    last one that the next run drops. A disk that refuses it ends the benchmark in one line."""
    line = (json.dumps(rec) + "\n").encode("utf-8")
    try:
        written = os.write(fd, line)
        if written != len(line):  # a short write: only a disk that has just filled does this
            raise OSError(28, "No space left on device")
    except OSError as exc:
        raise UserError(output_error("results", exc) + "; the records before it are kept",
                        file=str(out)) from None


def run_bench(tasks: list[Task], out_jsonl: str | Path, workers: int = 1, backend: str = "local",
              progress: bool = True, on_record: Callable[[dict[str, Any]], None] | None = None
              ) -> list[dict[str, Any]]:
    """Run the unfinished tasks, appending a line per episode to `out_jsonl`; returns all records
    of the file that belong to `tasks` (old and new), so the report covers exactly this request."""
    out = Path(out_jsonl)
    if out.is_dir():
        raise UserError("cannot write the results: it is a directory (name a file)", file=str(out))
    check_folder(out.parent, "benchmark results", display=str(out))
    drop_torn_line(out)
    done = finished_keys(out)
    todo = [t for t in tasks if t.key not in done]
    bar = Progress(len(tasks), len(tasks) - len(todo)) if progress else None
    if todo:
        source = _ray_iter(todo, workers) if backend == "ray" else _local_iter(todo, workers)
        fd = os.open(out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        new = 0
        try:
            for rec in source:
                _append(fd, out, rec)
                new += 1
                if bar:
                    bar.update(rec)
                if on_record:
                    on_record(rec)
        except WorkerDied as exc:
            raise WorkerDied(f"{out}: {exc} after {new} new episodes; the finished ones are kept, "
                             "run the same command again to resume") from None
        finally:
            os.close(fd)
            close = getattr(source, "close", None)
            if close is not None:  # the pool's queued episodes dropped now, not when collected
                close()
    if bar:
        bar.close()
    wanted = {t.key for t in tasks}
    latest: dict[str, dict[str, Any]] = {}
    for r in load_records(out):
        if r.get("key") in wanted:
            if "error" in r and r["key"] in latest and "error" not in latest[r["key"]]:
                continue
            latest[r["key"]] = r
    return list(latest.values())
