"""Assemble what a run needs from a robot profile: driver, perceiver and the services leaves use.

Only this module (and the CLI) names concrete drivers, and only lazily, so nodes stay driver-free
and an optional backend that is not installed fails with one clear line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bt_grasp.profile import RobotProfile

if TYPE_CHECKING:  # typing only: drivers and perceivers are loaded as plug-ins, lazily
    from bt_grasp.drivers.base import Driver
    from bt_grasp.perception.types import Perceiver


@dataclass
class World:
    profile: RobotProfile
    driver: Driver
    perceiver: Perceiver
    services: dict[str, Any] = field(default_factory=dict)

    def close(self) -> None:
        close = getattr(self.driver, "close", None)
        if close is not None:
            close()


def make_driver(profile: RobotProfile, gui: bool = False, lighting: str = "easy",
                image_size: int | None = None, dry_run: bool = False, name: str | None = None) -> Driver:
    """The driver plug-in `name` (default: the profile's `driver:`) for this profile."""
    from bt_grasp.plugins import DRIVERS, load

    factory = load(DRIVERS, name or profile.driver, file="--driver" if name else profile.source)
    return factory(profile, gui=gui, lighting=lighting, image_size=image_size, dry_run=dry_run)


def make_services(profile: RobotProfile) -> dict[str, Any]:
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

    return {"classify": classify_telemetry, "plan_grasps": grasps, "plan_push": plan_push,
            "semantic_verifier": TargetStillThere(), "thresholds": thresholds}


def build_world(profile: RobotProfile, perception: str | None = None, gui: bool = False,
                lighting: str = "easy", image_size: int | None = None, dry_run: bool = False,
                driver: str | None = None, vocabulary: str | None = None) -> World:
    """Driver and perceiver by plug-in name: given here, else the profile's, else the default.
    `vocabulary`: the perceiver's vocabulary file (else the profile's, else the shipped one)."""
    from bt_grasp.plugins import PERCEIVERS, load

    name = perception or profile.perception
    where = "--perception" if perception else profile.source  # where a wrong name was written
    factory = load(PERCEIVERS, name, file=where)  # a bad perceiver fails before a simulator starts
    vocab = read_vocabulary(vocabulary or profile.perception_vocabulary)
    robot = make_driver(profile, gui=gui, lighting=lighting, image_size=image_size, dry_run=dry_run,
                        name=driver)
    try:
        perceiver = factory(**perceiver_options(robot, vocab))
        services = make_services(profile)
    except Exception:
        robot.close()
        raise
    return World(profile, robot, perceiver, services)


def read_vocabulary(path: str | None) -> Any:
    """The Vocabulary in file `path` (None: None, the perceiver's default); bad files are one line."""
    if path is None:
        return None
    from bt_grasp.perception.lexicon import Vocabulary

    return Vocabulary.from_yaml(path)


def perceiver_options(driver: Any, vocabulary: Any = None) -> dict[str, Any]:
    """The perceiver's keyword arguments: the vocabulary, without its texture `looks` for a world
    that draws every object in its own colour (lexicon.Vocabulary.untextured); none when default."""
    if getattr(driver, "draws_mesh_textures", True):
        return {} if vocabulary is None else {"vocabulary": vocabulary}
    from bt_grasp.perception.lexicon import default_vocabulary

    return {"vocabulary": (vocabulary or default_vocabulary()).untextured()}
