"""Assemble what a run needs from a robot profile: driver, perceiver and the services leaves use.

Only this module (and the CLI) names concrete drivers, and only lazily, so nodes stay driver-free
and an optional backend that is not installed fails with one clear line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bt_grasp.errors import BackendUnavailable, UserError
from bt_grasp.profile import RobotProfile


@dataclass
class World:
    profile: RobotProfile
    driver: Any
    perceiver: Any
    services: dict[str, Any] = field(default_factory=dict)

    def close(self) -> None:
        close = getattr(self.driver, "close", None)
        if close is not None:
            close()


def make_driver(profile: RobotProfile, gui: bool = False, lighting: str = "easy",
                image_size: int | None = None, dry_run: bool = False) -> Any:
    if profile.driver == "pybullet_arm":
        from bt_grasp.drivers.pybullet_arm import PyBulletArm

        return PyBulletArm(profile, gui=gui, lighting=lighting, image_size=image_size)
    if profile.driver == "stretch":
        try:
            from bt_grasp.drivers.stretch.factory import make_stretch_driver
        except ImportError as exc:
            raise BackendUnavailable(f"Stretch driver unavailable: {exc} "
                                     "(pip install 'bt_grasp[stretch-sim]')") from None
        return make_stretch_driver(profile, dry_run=dry_run, gui=gui)
    raise UserError(f"unknown driver '{profile.driver}' (use pybullet_arm or stretch)",
                    file=profile.source)


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


def build_world(profile: RobotProfile, perception: str = "geometric", gui: bool = False,
                lighting: str = "easy", image_size: int | None = None, dry_run: bool = False) -> World:
    from bt_grasp.perception.backends import make_perceiver

    driver = make_driver(profile, gui=gui, lighting=lighting, image_size=image_size, dry_run=dry_run)
    try:
        perceiver = make_perceiver(perception)
        services = make_services(profile)
    except Exception:
        driver.close()
        raise
    return World(profile, driver, perceiver, services)
