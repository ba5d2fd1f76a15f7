"""A run's observer publishing to Foxglove: the trace's records, plus what only the running
episode has — the frames perception captured, the located object's points and mask, the camera
and gripper poses.

Why it reads the context: images and point clouds are too large for the trace (which keeps
summaries), so they are taken from the run as it happens. It only reads: the last frame a
perception leaf used (`ctx.memory.last_observation`), blackboard values that changed this tick,
and the driver's TCP pose where the driver offers one (`tcp_pose()`, the simulated arm)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bt_grasp.drivers.capabilities import ReportsTcp
from bt_grasp.observe import foxglove_messages as fm
from bt_grasp.observe.foxglove_channels import FoxglovePublisher
from bt_grasp.observe.foxglove_tree import tree_xml
from bt_grasp.observe.recording import finite_numbers
from bt_grasp.observers import Record, RunObserver, Tick
from bt_grasp.trace_reader import clock_of

if TYPE_CHECKING:
    from bt_grasp.context import RunContext
    from bt_grasp.result import EpisodeResult


class FoxgloveObserver(RunObserver):
    """Publishes a run on `publisher`'s channels; camera pixels only when `images`."""

    def __init__(self, publisher: FoxglovePublisher, images: bool = False) -> None:
        self.publisher = publisher
        self.images = images
        self.ctx: RunContext | None = None
        self._frame: Any = None
        self._clock = 0.0  # the last finite clock (a tick whose clock is not finite keeps it)

    def started(self, header: Record, ctx: RunContext) -> None:
        self.ctx = ctx
        self._frame = ctx.memory.last_observation  # a frame from set-up is not perception's
        self.publisher.header(header, tree_xml(header))
        self._gripper(0.0)

    def ticked(self, tick: Tick) -> None:
        ctx = self.ctx
        clock = self._clock = clock_of({"clock": tick.clock}, self._clock)
        if ctx is not None:
            obs = ctx.memory.last_observation
            if obs is not None and obs is not self._frame:
                self._frame = obs
                if finite_numbers(obs.K, obs.T_cam_base):  # a frame without a usable geometry is left out
                    self.publisher.frame(clock, obs, self.images)
            for key in tick.blackboard:
                value = ctx.blackboard.get(key)
                if getattr(value, "points_base", None) is not None:
                    self.publisher.located(clock, value, self.images)
            self._gripper(clock)
        self.publisher.tick_record(tick.record)

    def finished(self, final: Record, result: EpisodeResult) -> None:
        self.publisher.final(final)

    def _gripper(self, clock: float) -> None:
        """base -> gripper from the driver's TCP pose, if it reports one."""
        driver = self.ctx.driver if self.ctx is not None else None
        if not isinstance(driver, ReportsTcp):
            return
        tcp = driver.tcp_pose
        try:
            position, orientation = tcp()
        except Exception:  # a recorder never stops a run: the frame is just missing
            return
        if not finite_numbers(position, orientation):
            return
        self.publisher.transforms(clock, [fm.transform(clock, fm.GRIPPER, position, orientation)])
