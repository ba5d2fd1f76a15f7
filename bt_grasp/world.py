"""Assemble what a run needs from a robot profile: driver, perceiver and the services leaves use.

The one builder: `bt-grasp run` (episode.py), the Python API (api.run), the benchmark's workers,
the mobile scenarios and the MCP server all build their World with build_world, so the same robot
gets the same driver, perceiver (with the same vocabulary) and services whichever way it is run.
Only this module (and the CLI) names concrete drivers, and only lazily, so nodes stay driver-free
and an optional backend that is not installed fails with one clear line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bt_grasp.drivers.capabilities import MeshTextures
from bt_grasp.plugins import PERCEIVERS, load
from bt_grasp.plugins import make_driver as make_driver  # the one driver factory, re-exported
from bt_grasp.plugins import make_perceiver as make_perceiver  # the one perceiver factory, re-exported
from bt_grasp.profile import RobotProfile
from bt_grasp.services import Services, services_with

if TYPE_CHECKING:  # typing only: drivers and perceivers are loaded as plug-ins, lazily
    from bt_grasp.drivers.base import Driver
    from bt_grasp.perception.lexicon import Vocabulary
    from bt_grasp.perception.types import Perceiver


@dataclass
class World:
    profile: RobotProfile
    driver: Driver
    perceiver: Perceiver
    services: Services = field(default_factory=Services)

    def close(self) -> None:
        close = getattr(self.driver, "close", None)
        if close is not None:
            close()


def make_services(profile: RobotProfile) -> Services:
    """The planners and the Watchdog the leaves call through ctx.services."""
    from bt_grasp.perception.grasps import GripperModel, plan_grasps
    from bt_grasp.perception.push import plan_push
    from bt_grasp.watchdog.classify import classify
    from bt_grasp.watchdog.semantic import TargetStillThere
    from bt_grasp.watchdog.thresholds import thresholds_from_profile

    thresholds = thresholds_from_profile(profile)
    gripper = GripperModel(max_aperture=profile.gripper.max_aperture_m,
                           max_object_width=0.88 * profile.gripper.max_aperture_m)

    def classify_telemetry(telemetry):
        return classify(telemetry, thresholds)

    planned: list[tuple[Any, Any, list]] = []  # (frame, located, grasps), newest last

    def grasps(obs, located):
        """Plans are deterministic for (frame, located object): locate_any scores an object and
        the grasp leaf then executes the same object's plan, so recent plans are reused."""
        for frame, obj, poses in planned:
            if frame is obs and obj is located:
                return list(poses)
        poses = plan_grasps(obs, located, gripper)
        planned.append((obs, located, poses))
        del planned[:-4]
        return list(poses)

    return Services(classify=classify_telemetry, plan_grasps=grasps, plan_push=plan_push,
                    semantic_verifier=TargetStillThere(), thresholds=thresholds)


def build_world(profile: RobotProfile, perception: Perceiver | str | None = None, gui: bool = False,
                lighting: str = "easy", image_size: int | None = None, dry_run: bool = False,
                driver: Driver | str | None = None, vocabulary: Vocabulary | str | None = None,
                services: Services | Mapping[str, Any] | None = None, flags: bool = True) -> World:
    """The World every entry point runs on. `perception` / `driver`: plug-in names (else the
    profile's) or ready objects (a driver passed in is the caller's: reused, closed by it);
    `vocabulary`: the perceiver's vocabulary, a file or a Vocabulary (else the profile's, else the
    shipped one); `services` override the planners and the Watchdog of make_services (a whole
    Services record, or a mapping of the services it replaces). A driver
    made here is closed again if the rest cannot be built. A wrong plug-in name is located at its
    command-line flag (--driver, --perception), or with `flags` False nowhere (a keyword argument
    of the Python API), or at the profile's file when it came from there."""
    flag = "--perception" if flags else None
    if isinstance(perception, str) or perception is None:
        where = flag if perception else profile.source  # where a wrong name was written
        load(PERCEIVERS, perception or profile.perception, file=where)  # fails before a simulator starts
    vocab: Any = read_vocabulary(vocabulary or profile.perception_vocabulary) \
        if vocabulary is None or isinstance(vocabulary, str) else vocabulary
    robot: Any = make_driver(profile, driver, gui=gui, lighting=lighting, image_size=image_size, dry_run=dry_run,
                             flag="--driver" if flags else None) \
        if driver is None or isinstance(driver, str) else driver
    made = robot is not driver
    try:
        perceiver = world_perceiver(profile, robot, perception, vocab, flag) \
            if perception is None or isinstance(perception, str) else perception
        return World(profile, robot, perceiver, services_with(make_services(profile), services))
    except Exception:
        if made:
            robot.close()
        raise


def world_perceiver(profile: RobotProfile, driver: Any, name: str | None = None,
                    vocabulary: Vocabulary | None = None, flag: str | None = "--perception") -> Perceiver:
    """A fresh perceiver of plug-in `name` (else the profile's) for `driver`'s world, with
    `vocabulary` (else the shipped one) as perceiver_options fits it to that world."""
    where = flag if name else profile.source
    return make_perceiver(name or profile.perception, file=where, **perceiver_options(driver, vocabulary))


def read_vocabulary(path: str | None) -> Any:
    """The Vocabulary in file `path` (None: None, the perceiver's default); bad files are one line."""
    if path is None:
        return None
    from bt_grasp.perception.lexicon import Vocabulary

    return Vocabulary.from_yaml(path)


def perceiver_options(driver: Any, vocabulary: Any = None) -> dict[str, Any]:
    """The perceiver's keyword arguments: the vocabulary, without its texture `looks` for a world
    that draws every object in its own colour (lexicon.Vocabulary.untextured); none when default."""
    if not isinstance(driver, MeshTextures) or driver.draws_mesh_textures:
        return {} if vocabulary is None else {"vocabulary": vocabulary}
    from bt_grasp.perception.lexicon import default_vocabulary

    return {"vocabulary": (vocabulary or default_vocabulary()).untextured()}
