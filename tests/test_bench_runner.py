"""Runner mechanics without physics: resumable by key, torn lines ignored, errors retried;
the Ray backend on a 2-worker local cluster when Ray is installed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from helpers import ROOT

from bt_grasp.bench import runner as bench_runner
from bt_grasp.bench import scene_cache
from bt_grasp.bench.results import load_records
from bt_grasp.bench.runner import run_bench
from bt_grasp.bench.tasks import make_tasks
from bt_grasp.cli import main


def fake_run(calls):
    def run(task):
        calls.append(task.key)
        return {"key": task.key, "method": task.method, "perception": task.perception,
                "lighting": task.lighting, "seed": task.seed, "episode": task.episode,
                "task_success": True}
    return run


def test_resume_runs_only_missing_and_errored_episodes(tmp_path, monkeypatch):
    tasks = make_tasks(["trees/a.yaml", "trees/b.yaml"], [0, 1], 2, ["easy"], ["sim"], 64)
    assert len(tasks) == 8 and len({t.key for t in tasks}) == 8
    out = tmp_path / "results.jsonl"
    lines = [json.dumps({"key": tasks[0].key, "task_success": True}),
             json.dumps({"key": tasks[1].key, "error": "RuntimeError: flaky"}),
             json.dumps({"key": tasks[2].key, "task_success": False}),
             '{"key": "' + tasks[3].key + '", "task_succ']  # torn by a kill
    out.write_text("\n".join(lines))
    calls: list[str] = []
    monkeypatch.setattr(bench_runner, "run_task", fake_run(calls))
    recs = run_bench(tasks, out, workers=1, progress=False)
    assert sorted(calls) == sorted([tasks[1].key] + [t.key for t in tasks[3:]])
    assert {r["key"] for r in recs} == {t.key for t in tasks}
    assert not [r for r in recs if "error" in r]  # the retried episode replaced its error
    calls.clear()
    run_bench(tasks, out, workers=1, progress=False)
    assert calls == []


def test_tasks_are_scene_major_and_keys_name_the_configuration():
    tasks = make_tasks(["x/clutter.yaml", "x/open_loop.yaml"], [3], 2, ["hard"], ["geometric"], 512)
    assert [t.method for t in tasks[:2]] == ["clutter", "open_loop"]
    assert tasks[0].episode == tasks[1].episode == 0
    assert tasks[0].key == "clutter|geometric|hard|512|3|0"


def test_ray_backend_two_workers(tmp_path):
    pytest.importorskip("ray", reason="ray is not installed (pip install 'bt_grasp[ray]')")
    out = tmp_path / "ray"
    code = main(["bench", "--trees", str(ROOT / "trees" / "open_loop.yaml"), "--seeds", "0",
                 "--episodes", "2", "--lighting", "easy", "--perception", "sim", "--workers", "2",
                 "--image-size", "128", "--backend", "ray", "--out", str(out), "--no-progress"])
    assert code == 0
    recs = load_records(out / "results.jsonl")
    assert len(recs) == 2 and not [r for r in recs if "error" in r]


def test_remove_all_is_proven_bounded():
    assert main(["verify", str(ROOT / "trees" / "remove_all.yaml")]) == 0


def test_scene_cache_returns_exactly_the_generated_scene(tmp_path, monkeypatch):
    import bt_grasp.drivers.pybullet_arm.driver as arm_driver
    from bt_grasp.drivers.pybullet_arm.episodes import default_camera, generate_episode

    monkeypatch.setattr(arm_driver, "generate_episode", generate_episode)
    monkeypatch.setitem(scene_cache._SCENE_CACHE, "installed", False)
    monkeypatch.setitem(scene_cache._SCENE_CACHE, "memo", {})
    scene_cache.install_scene_cache(str(tmp_path))
    cam = default_camera(64)
    fresh = generate_episode(7, high_clutter_share=0.5, camera=cam)
    first = arm_driver.generate_episode(7, high_clutter_share=0.5, camera=cam)  # miss: generates
    scene_cache._SCENE_CACHE["memo"].clear()
    again = arm_driver.generate_episode(7, high_clutter_share=0.5, camera=cam)  # from disk
    assert len(list(tmp_path.glob("*.pkl"))) == 1
    assert first == fresh and again == fresh and again is not first



def test_pool_workers_exit_when_the_benchmark_is_killed(tmp_path):
    """SIGKILL runs no clean-up in the parent: its workers must still stop, not run on."""
    script = tmp_path / "pool.py"
    script.write_text(
        "import os, sys, time\n"
        "from concurrent.futures import ProcessPoolExecutor\n"
        "import multiprocessing as mp\n"
        "from bt_grasp.bench.runner import exit_with_parent\n"
        "if __name__ == '__main__':\n"
        "    pool = ProcessPoolExecutor(2, mp_context=mp.get_context('spawn'), initializer=exit_with_parent,\n"
        "                               initargs=(0.1,))\n"
        "    [pool.submit(time.sleep, 0.5) for _ in range(2)]\n"
        "    pids = {pool.submit(os.getpid).result(timeout=60) for _ in range(6)}\n"
        "    [pool.submit(time.sleep, 60) for _ in range(4)]\n"
        "    print(' '.join(map(str, sorted(pids))), flush=True)\n"
        "    time.sleep(120)\n")
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        pids = [int(p) for p in parent.stdout.readline().split()]
        assert pids
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 10
        alive = pids
        while alive and time.monotonic() < deadline:
            time.sleep(0.1)
            alive = [p for p in pids if _running(p)]
        assert not alive, f"workers still running after their parent was killed: {alive}"
    finally:
        parent.kill()


def _running(pid: int) -> bool:
    """Is `pid` a live process (not a zombie)?"""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[-1][0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        return os.path.exists(f"/proc/{pid}")


def test_a_torn_last_line_is_dropped_with_one_warning_and_the_file_repaired(tmp_path, monkeypatch, capsys):
    tasks = make_tasks(["trees/a.yaml"], [0], 3, ["easy"], ["sim"], 64)
    out = tmp_path / "results.jsonl"
    out.write_text(json.dumps({"key": tasks[0].key, "task_success": True}) + "\n"
                   + '{"key": "' + tasks[1].key + '", "task_succ')  # torn by a kill
    calls: list[str] = []
    monkeypatch.setattr(bench_runner, "run_task", fake_run(calls))
    run_bench(tasks, out, workers=1, progress=False)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"bt-grasp: warning: {out}: dropped a torn last line")
    assert sorted(calls) == sorted(t.key for t in tasks[1:])
    lines = out.read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(line) for line in lines)  # every line valid again


def test_a_worker_killed_mid_benchmark_is_one_line_and_a_rerun_resumes(tmp_path, monkeypatch, capsys):
    tasks = make_tasks(["trees/a.yaml"], [0], 4, ["easy"], ["sim"], 64)
    out = tmp_path / "results.jsonl"

    def dying(todo, workers):
        from concurrent.futures.process import BrokenProcessPool

        yield fake_run([])(todo[0])
        try:
            raise BrokenProcessPool("A process in the process pool was terminated abruptly")
        except BrokenProcessPool:
            raise bench_runner.WorkerDied("a worker process died (killed, or out of memory)") from None

    monkeypatch.setattr(bench_runner, "_local_iter", dying)
    with pytest.raises(bench_runner.WorkerDied, match="after 1 new episodes; the finished ones are kept"):
        run_bench(tasks, out, workers=2, progress=False)
    assert len(load_records(out)) == 1
    monkeypatch.undo()
    calls: list[str] = []
    monkeypatch.setattr(bench_runner, "run_task", fake_run(calls))
    run_bench(tasks, out, workers=1, progress=False)
    assert sorted(calls) == sorted(t.key for t in tasks[1:])


def test_a_real_pool_worker_killed_with_sigkill_ends_bench_in_one_line(tmp_path, capsys):
    """The pool's BrokenProcessPool becomes one line and exit 1, the finished record kept."""
    script = tmp_path / "kill.py"
    script.write_text(
        "import os, signal, sys\n"
        "from bt_grasp.bench import runner\n"
        "from bt_grasp.bench.tasks import make_tasks\n"
        "def task(t):\n"
        "    if t.episode == 1:\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "    return {'key': t.key, 'task_success': True}\n"
        "runner.run_task = task\n"
        "if __name__ == '__main__':\n"
        "    tasks = make_tasks(['trees/a.yaml'], [0], 2, ['easy'], ['sim'], 64)\n"
        "    try:\n"
        "        runner.run_bench(tasks, sys.argv[1], workers=2, progress=False)\n"
        "    except runner.WorkerDied as exc:\n"
        "        print(exc, file=sys.stderr)\n"
        "        sys.exit(1)\n")
    out = tmp_path / "results.jsonl"
    proc = subprocess.run([sys.executable, str(script), str(out)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 1, proc.stderr
    assert "a worker process died" in proc.stderr and "Traceback" not in proc.stderr


def test_bench_out_naming_a_regular_file_is_one_line_exit_2(tmp_path, capsys):
    target = tmp_path / "results.txt"
    target.write_text("x")
    assert main(["bench", "--trees", "clutter", "--episodes", "1", "-o", str(target)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"{target}: is a file; -o names the folder")


def test_bench_reports_a_dead_worker_in_one_line_with_exit_1(tmp_path, monkeypatch, capsys):
    def dies(*_args, **_kwargs):
        raise bench_runner.WorkerDied(f"{tmp_path}/results.jsonl: a worker process died (killed, or out "
                                      "of memory) after 3 new episodes; the finished ones are kept, "
                                      "run the same command again to resume")

    monkeypatch.setattr(bench_runner, "run_bench", dies)
    assert main(["bench", "--trees", "clutter", "--episodes", "1", "-o", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "a worker process died" in err[0] and "run the same command again" in err[0]
