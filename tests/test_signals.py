"""A signal at any moment of a run leaves a readable trace that records the decision.

Three moments: during set-up (the arm loading its URDFs), between ticks, and inside a
primitive. SIGINT/SIGTERM stop the driver and record WAIT_CLARIFY "interrupted"; SIGKILL cannot
be caught, so its trace is readable up to the last line written (the header, before set-up).
"""

from __future__ import annotations

import os
import signal
import time

from helpers import start_endless_run, tree

from bt_grasp.blackboard import Blackboard
from bt_grasp.context import RunContext
from bt_grasp.default_registry import default_registry
from bt_grasp.runner import Runner
from bt_grasp.tick_budget import episode_limits
from bt_grasp.trace import TraceWriter, read_trace

GRASP_LOOP = """
tree: grasp_loop
budgets: {actions: 1000, max_ticks: 1000}
root:
  repeat:
    child:
      force_success:
        child:
          sequence:
            children:
              - open_gripper: {id: open}
              - grasp: {id: grasp, target: mug}
"""


def _start_run(tmp_path):
    """A real run on the arm, stopped as soon as its trace has a header: set-up takes seconds."""
    return start_endless_run(tmp_path, lambda text: text.endswith("\n"), 60, "no trace header")


def test_sigint_during_set_up_records_wait_clarify_interrupted(tmp_path):
    proc, trace = _start_run(tmp_path)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert "Traceback" not in err, err
    assert proc.returncode == 130
    assert out.startswith("WAIT_CLARIFY: interrupted")
    t = read_trace(trace)
    assert t.complete and t.final["decision"] == "WAIT_CLARIFY" and t.final["reason"] == "interrupted"
    assert t.final["ticks"] == 0 and t.ticks == []  # it landed in set-up, before the first tick
    assert t.header["tree"] == "endless" and t.header["structure"]["type"] == "repeat"


def test_sigkill_during_set_up_leaves_a_readable_header(tmp_path):
    proc, trace = _start_run(tmp_path)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    t = read_trace(trace)
    assert not t.complete and t.ticks == []
    assert t.header["tree"] == "endless" and t.header["robot"] == "ur5e_robotiq"


class _Driver:
    """Only what an interrupted run touches: stop()."""

    def __init__(self) -> None:
        self.stopped = 0

    def stop(self) -> None:
        self.stopped += 1


class _KillingOracle:
    """Answers every leaf with its first outcome; sends `sig` to this process at the n-th grasp."""

    def __init__(self, sig: int, at_grasp: int) -> None:
        self.sig, self.at, self.grasps = sig, at_grasp, 0

    def choose(self, node_id: str, alphabet: tuple[str, ...]) -> str:
        if node_id == "grasp":
            self.grasps += 1
            if self.grasps == self.at:
                os.kill(os.getpid(), self.sig)
                time.sleep(1)  # the handler interrupts this wait, as it would a motion
        return alphabet[0]


def _runner(tmp_path, oracle) -> tuple[Runner, _Driver, object]:
    spec = tree(GRASP_LOOP)
    driver = _Driver()
    ctx = RunContext(registry=default_registry(), limits=episode_limits(spec),
                     oracle=oracle, driver=driver, blackboard=Blackboard({"goal.object": "mug"}))
    path = tmp_path / "run.jsonl"
    return Runner(spec, ctx, trace_path=str(path)), driver, path


def test_sigterm_inside_a_primitive_stops_the_driver_and_records_the_decision(tmp_path):
    runner, driver, path = _runner(tmp_path, _KillingOracle(signal.SIGTERM, at_grasp=3))
    before = signal.getsignal(signal.SIGTERM)
    started = time.perf_counter()
    result = runner.run(handle_signals=True)
    assert time.perf_counter() - started < 1.0  # the primitive was cut short, not waited out
    assert (result.reason, result.exit_code, driver.stopped) == ("interrupted", 143, 1)
    t = read_trace(path)
    assert t.final["decision"] == "WAIT_CLARIFY" and t.final["reason"] == "interrupted"
    assert [tk["tick"] for tk in t.ticks] == list(range(1, len(t.ticks) + 1))
    assert signal.getsignal(signal.SIGTERM) is before  # the caller's handler is back


def test_sigint_between_ticks_records_the_decision_after_the_last_full_tick(tmp_path, monkeypatch):
    runner, driver, path = _runner(tmp_path, _KillingOracle(signal.SIGTERM, at_grasp=10 ** 9))
    real_write = TraceWriter.write

    def write_then_signal(self, record, sync=True):
        real_write(self, record, sync)
        if record.get("type") == "tick" and record["tick"] == 2:
            os.kill(os.getpid(), signal.SIGINT)  # delivered here: tick 2 is recorded, tick 3 not begun

    monkeypatch.setattr(TraceWriter, "write", write_then_signal)
    result = runner.run(handle_signals=True)
    assert (result.reason, result.exit_code, driver.stopped) == ("interrupted", 130, 1)
    t = read_trace(path)
    assert [tk["tick"] for tk in t.ticks] == [1, 2]
    assert t.final["ticks"] == 2 and t.final["reason"] == "interrupted"


def test_an_interrupt_before_a_run_has_handlers_is_one_line(monkeypatch, capsys):
    """Ctrl-C while the CLI still imports or loads the tree: exit 130 and one line, no traceback."""
    import bt_grasp.cli as cli

    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "import_pybullet_quietly", interrupted)
    assert cli.main(["run", "clutter"]) == 130
    assert capsys.readouterr().err == "interrupted\n"
