"""Fakes shared by test files: stand-ins for a driver and for a user leaf, and the trees they run.

- FakeStreamingRobot: a driver whose primitives run across ticks (tests of leaves that start,
  poll, halt); LIFT_THEN_FINALIZE and LIFT_WITH_DEADLINE are the trees it is driven with
  (tests/helpers.run_driver runs them).
- COMPARED: a tree BehaviorTree.CPP's Python binding runs alike (tests comparing Groot2 output).
- Busy: a user leaf (`nodes: ["fakes:Busy"]`) RUNNING `ticks` times, then SUCCESS, for the live
  view and `dot --tick`; BUSY is a tree that uses it.
"""

from __future__ import annotations

from py_trees.common import Status

from bt_grasp.drivers.base import Execution
from bt_grasp.drivers.motion import MotionHalted, SteppedMotion
from bt_grasp.nodes.base import Leaf
from bt_grasp.registry import NodeType, Port
from bt_grasp.watchdog.telemetry import Telemetry

# -- a driver whose motions run across ticks -------------------------------------------------------

PERIOD = 0.05


class FakeStreamingRobot:
    """Each primitive runs `periods[name]` control periods; records polls and cancels."""

    name = "fake"
    control_period = PERIOD

    def __init__(self, periods: dict[str, int], fail_on_poll: int | None = None) -> None:
        self.periods = periods
        self.fail_on_poll = fail_on_poll
        self.log: list[str] = []
        self.polls = 0

    def start(self, primitive: str, /, **kwargs) -> SteppedMotion:
        self.log.append(f"start {primitive}")
        ran = [0]

        def steps():
            try:
                for _ in range(self.periods.get(primitive, 1)):
                    self.polls += 1
                    if self.fail_on_poll is not None and self.polls == self.fail_on_poll:
                        raise RuntimeError("encoder lost")
                    ran[0] += 1
                    yield
            except MotionHalted as halt:
                self.log.append(f"cancel {primitive}: {halt.fault}")
                return Execution(Telemetry.empty(), ran[0] * PERIOD, halt.fault)
            self.log.append(f"end {primitive}")
            return Execution(Telemetry.empty(), ran[0] * PERIOD, None)

        return SteppedMotion(primitive, steps(), Telemetry.empty, lambda: ran[0] * PERIOD)

    def stop(self) -> None:
        self.log.append("stop")


# a 100-tick lift under a 0.2 s deadline (four ticks of PERIOD): the timeout halts it
LIFT_WITH_DEADLINE = """
    tree: t
    root:
      selector:
        children:
          - timeout:
              seconds: 0.2
              child:
                lift: {id: up}
          - wait_clarify: {reason: "too slow"}
"""

LIFT_THEN_FINALIZE = """
    tree: t
    root:
      sequence:
        children:
          - lift: {id: up}
          - finalize: {reason: lifted}
"""


# -- a user leaf that runs across ticks ------------------------------------------------------------

class Busy(Leaf):
    """RUNNING `ticks` times, then SUCCESS. Each tick it runs, it advances the logical clock by
    `step` seconds, as a polled motion would."""

    TYPE = "busy"
    NODE_TYPE = NodeType("busy", "action", {
        "ticks": Port("ticks", "int", default=3, minimum=0),
        "step": Port("step", "float", default=0.1),
    }, doc="RUNNING `ticks` ticks, then SUCCESS")

    def initialise(self) -> None:
        self.ticks_running = 0

    def update(self) -> Status:
        self.ticks_running += 1
        if self.ticks_running <= int(self.port("ticks")):
            self.ctx.clock.advance(float(self.port("step")))
            return Status.RUNNING
        return Status.SUCCESS


BUSY = """
    tree: busy
    nodes: ["fakes:Busy"]
    root:
      sequence:
        children:
          - survey_scene: {id: survey}
          - busy: {id: move, ticks: 3, step: 0.1}
          - finalize: {reason: moved}
"""


# -- a tree decided in one tick by conditions on the goal (goal "red mug"), which BehaviorTree.CPP
# can run too with port-less conditions answering by node name (the Groot2 comparisons)
COMPARED_ANSWERS = {"a": "SUCCESS", "c": "FAILURE", "d": "FAILURE", "e": "SUCCESS"}
COMPARED = """
    tree: compared
    root:
      sequence:
        id: s
        children:
          - label_is: {id: a, key: "{goal.object}", label: "red mug"}
          - inverter:
              id: i
              child:
                label_is: {id: c, key: "{goal.object}", label: "no"}
          - selector:
              id: f
              children:
                - label_is: {id: d, key: "{goal.object}", label: "no"}
                - label_is: {id: e, key: "{goal.object}", label: "red mug"}
"""


# -- a user leaf whose own code fails (not a driver call: the run's fault) --------------------------

class Explodes(Leaf):
    """Raises in its tick after `after` RUNNING ticks: a bug in node code, outside any driver call."""

    TYPE = "explodes"
    NODE_TYPE = NodeType("explodes", "action", {"after": Port("after", "int", default=1, minimum=0)},
                         doc="RUNNING `after` ticks, then raises")

    def initialise(self) -> None:
        self.ticks_running = 0

    def update(self) -> Status:
        self.ticks_running += 1
        if self.ticks_running > int(self.port("after")):
            raise RuntimeError("node code failed")
        return Status.RUNNING
