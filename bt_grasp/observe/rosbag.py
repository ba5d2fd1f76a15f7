"""A run as a ROS 2 bag (rosbag2, sqlite3 storage), written with `rosbags` and no ROS installed:
`RosbagRecorder` records a run as it happens (what `--record run.db3` picks through
observe.recorders), `write_rosbag` turns a recorded trace into a bag (`trace convert -o run.db3`).

A rosbag2 bag is a folder (metadata.yaml and the storage file), so `run.db3` names the folder
`run/` holding `run/run.db3`: `ros2 bag play run`, `ros2 bag info run` and `bt-grasp perceive
run.db3` all open it. Every message is stamped with the run's logical clock (seconds from the
run's start), the clock the trace and the .btlog use, so the topics line up with each other and
with the trace's ticks.

Topics (rosbag_msgs.TOPICS): each frame the perception used, once, when it was first used
(rgb8 and 32FC1 depth, with `images`), its CameraInfo and the camera pose in /tf; the gripper's
pose in /tf after every tick where the driver reports one; the tree's status changes per tick
as Nav2's BehaviorTreeLog; the trace's records as JSON strings.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bt_grasp.drivers.capabilities import ReportsTcp
from bt_grasp.errors import UserError
from bt_grasp.json_encoding import encode_record
from bt_grasp.observe.extras import need
from bt_grasp.observe.groot2_status import StatusFold
from bt_grasp.observe.groot2_xml import groot2_tree
from bt_grasp.observe.recording import Recorder, finite_numbers
from bt_grasp.observe.rosbag_msgs import (
    BT_LOG,
    CAMERA_FRAME,
    CAMERA_INFO,
    IMAGE,
    STRING,
    TCP_FRAME,
    TF,
    TOPICS,
    Builder,
    typestore,
)
from bt_grasp.observe.rosbag_recover import VERSION, write_metadata, writer_metadata
from bt_grasp.observers import Record, Tick
from bt_grasp.outputs import check_folder, output_error
from bt_grasp.trace_reader import clock_of

if TYPE_CHECKING:
    from bt_grasp.context import RunContext
    from bt_grasp.result import EpisodeResult
    from bt_grasp.trace_reader import Trace


def bag_folder(path: str | Path) -> Path:
    """The folder a bag named `path` is written to: `run.db3` -> `run/`, a bare name as it is."""
    path = Path(path)
    return path.with_suffix("") if path.suffix.lower() == ".db3" else path


class BagWriter:
    """One open bag: connections made on first use, messages serialized as CDR.

    `flush()` commits the messages written so far and rewrites metadata.yaml, so a bag whose
    writer is killed opens in any rosbag2 reader with everything up to its last flush. The bag
    is flushed once when opened: a folder that cannot take it is a UserError, nothing left."""

    def __init__(self, path: str | Path) -> None:
        rosbag2 = need("rosbags.rosbag2")
        self.folder = bag_folder(path)
        if self.folder.exists():
            raise UserError(f"{self.folder} already exists (remove it, or record to another name)",
                            file=str(path))
        check_folder(self.folder.parent, "ROS 2 bag", display=str(path))
        self.store = typestore()
        self.build = Builder(self.store)
        self._writer = rosbag2.Writer(self.folder, version=VERSION)
        self._connections: dict[str, Any] = {}
        try:
            self._writer.open()
            # keep a transaction's pages in memory until its commit: the file on disk then
            # always holds whole transactions, for readers that open it read-only
            self._writer.storage.conn.execute("PRAGMA cache_spill=OFF")
            self.flush()
        except (OSError, sqlite3.Error) as exc:
            storage, self._writer.storage = self._writer.storage, None  # the folder goes
            if storage is not None:
                with contextlib.suppress(sqlite3.Error):
                    storage.conn.close()
            shutil.rmtree(self.folder, ignore_errors=True)
            reason = output_error("ROS 2 bag", exc) if isinstance(exc, OSError) else f"cannot write the ROS 2 bag: {exc}"
            raise UserError(reason, file=str(path)) from None

    def flush(self) -> None:
        """Commit what is written and rewrite metadata.yaml to match it."""
        storage = self._writer.storage
        storage.conn.commit()
        write_metadata(self.folder, writer_metadata(self._writer, storage.path.name))

    def write(self, topic: str, msgtype: str, msg: Any, seconds: float) -> None:
        conn = self._connections.get(topic)
        if conn is None:
            conn = self._writer.add_connection(topic, msgtype, typestore=self.store)
            self._connections[topic] = conn
        ns = max(0, round(seconds * 1e9))
        self._writer.write(conn, ns, self.store.serialize_cdr(msg, msgtype))

    def frame(self, obs: Any, seconds: float, images: bool) -> None:
        """One Observation: its intrinsics and camera pose, and its pixels with `images`."""
        b = self.build
        h, w = obs.depth.shape[:2]
        self.write(TOPICS["info"], CAMERA_INFO, b.camera_info(obs.K, h, w, seconds), seconds)
        self.write(TOPICS["tf"], TF, b.tf([b.transform(obs.T_cam_base, seconds, CAMERA_FRAME)]), seconds)
        if images:
            self.write(TOPICS["rgb"], IMAGE, b.image(obs.rgb, seconds), seconds)
            self.write(TOPICS["depth"], IMAGE, b.image(obs.depth, seconds), seconds)

    def record(self, record: Record, seconds: float) -> None:
        self.write(TOPICS["trace"], STRING, self.build.string(encode_record(record)), seconds)

    def close(self) -> None:
        self._writer.close()

    def abandon(self) -> None:
        """After a fault: close if the bag takes it, else leave what was committed (and its
        metadata.yaml from the last flush)."""
        try:
            self._writer.close()
        except Exception:  # noqa: BLE001 - the bag as of its last flush stays readable
            with contextlib.suppress(Exception):
                self._writer.storage.conn.close()
            self._writer.storage = None


class _TreeLog:
    """Status changes per tick, named by node id, for Nav2's BehaviorTreeLog."""

    def __init__(self, header: Record) -> None:
        tree = groot2_tree(header["structure"])
        self.fold = StatusFold(tree)
        self.names = {uid: nid for nid, uid in tree.uids.items()}

    def changes(self, visited: Any) -> list[tuple[str, int, int]]:
        return [(self.names[uid], new, prev) for uid, new, prev in self.fold.tick(visited)]


def tcp_pose(driver: Any) -> np.ndarray | None:
    """The gripper's pose in the base frame as a 4x4 matrix, where the driver reports it
    (the simulated arm's `tcp_pose()`; a driver without it records no gripper pose)."""
    from scipy.spatial.transform import Rotation

    if not isinstance(driver, ReportsTcp):
        return None
    pos, quat = driver.tcp_pose()
    if not finite_numbers(pos, quat):
        return None  # a pose that is not finite is left out of the recording
    T = np.eye(4)
    T[:3, :3] = Rotation.from_quat(np.asarray(quat, dtype=float)).as_matrix()
    T[:3, 3] = np.asarray(pos, dtype=float)
    return T


class RosbagRecorder(Recorder):
    """Records a run to a ROS 2 bag (see the module docstring). Reads the frame the perception
    leaves keep in `ctx.memory.last_observation` after each tick, so it records what the
    tree saw without asking the driver for frames of its own. Flushed every `flush_interval`
    seconds of wall time (recording.Recorder)."""

    what = "ROS 2 bag"

    def __init__(self, path: str | Path, images: bool = True, flush_interval: float = 1.0) -> None:
        super().__init__(path, flush_interval)
        self.bag = BagWriter(path)
        self.images = images
        self.frames = 0
        self._ctx: RunContext | None = None
        self._last: Any = None
        self._log: _TreeLog | None = None
        self._clock = 0.0  # the last finite clock (a tick whose clock is not finite keeps it)

    def begin(self, header: Record, ctx: RunContext) -> None:
        self._ctx = ctx
        self._log = _TreeLog(header)
        self.bag.record(header, 0.0)

    def add_tick(self, tick: Tick) -> None:
        t = self._clock = clock_of({"clock": tick.clock}, self._clock)
        if self._log is not None:
            changes = self._log.changes(tick.visited)
            if changes:
                self.bag.write(TOPICS["bt_log"], BT_LOG, self.bag.build.bt_log(changes, t), t)
        self.bag.record(tick.record, t)
        if self._ctx is None:
            return
        obs = self._ctx.memory.last_observation
        if obs is not None and obs is not self._last:
            self._last = obs
            if finite_numbers(obs.K, obs.T_cam_base):  # a frame without a usable geometry is left out
                self.frames += 1
                self.bag.frame(obs, t, self.images)
        T = tcp_pose(self._ctx.driver) if self._ctx.driver is not None else None
        if T is not None:
            b = self.bag.build
            self.bag.write(TOPICS["tf"], TF, b.tf([b.transform(T, t, TCP_FRAME)]), t)

    def end(self, final: Record, result: EpisodeResult) -> None:
        self.bag.record(final, clock_of(final, self._clock))

    def flush(self) -> None:
        self.bag.flush()

    def finish_file(self) -> None:
        self.bag.close()

    def abandon(self) -> None:
        self.bag.abandon()


def write_rosbag(trace: Trace, out: Path) -> None:
    """A recorded trace as a bag (the converter registered for .db3): the tree's status changes
    and the trace records; a trace holds no frames, so no camera topics."""
    bag = BagWriter(out)
    try:
        log = _TreeLog(trace.header)
        bag.record(trace.header, 0.0)
        t = 0.0
        for tick in trace.ticks:
            t = clock_of(tick, t)
            changes = log.changes(tick["visited"])
            if changes:
                bag.write(TOPICS["bt_log"], BT_LOG, bag.build.bt_log(changes, t), t)
            bag.record(tick, t)
        if trace.final is not None:
            bag.record(trace.final, clock_of(trace.final, t))
        bag.close()
    except (OSError, sqlite3.Error) as exc:  # a disk that fills while converting
        bag.abandon()
        reason = output_error("ROS 2 bag", exc) if isinstance(exc, OSError) else f"cannot write the ROS 2 bag: {exc}"
        raise UserError(reason, file=str(out)) from None
    except BaseException:
        bag.abandon()
        raise
