"""The built-in driver plug-ins (entry point group bt_grasp.drivers, declared in pyproject.toml).

Each is a factory `(profile, gui=, lighting=, image_size=, dry_run=) -> Driver`, the signature
every driver plug-in has; the driver modules are imported only when one is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bt_grasp.errors import BackendUnavailable

if TYPE_CHECKING:
    from bt_grasp.drivers.base import Driver


def pybullet_arm(profile: Any, gui: bool = False, lighting: str = "easy", image_size: int | None = None,
                 dry_run: bool = False) -> Driver:
    """The simulated UR5e (dry_run is meaningless in simulation and ignored)."""
    from bt_grasp.drivers.pybullet_arm import PyBulletArm

    return PyBulletArm(profile, gui=gui, lighting=lighting, image_size=image_size)


def mujoco_arm(profile: Any, gui: bool = False, lighting: str = "easy", image_size: int | None = None,
               dry_run: bool = False) -> Driver:
    """The simulated UR5e in MuJoCo (the optional `mujoco` extra; dry_run is ignored in simulation)."""
    require_mujoco()
    from bt_grasp.drivers.mujoco_arm import MujocoArm

    return MujocoArm(profile, gui=gui, lighting=lighting, image_size=image_size)


def require_mujoco() -> None:
    """BackendUnavailable naming the extra when mujoco is missing; it is not imported here, because
    the driver must set MUJOCO_GL first."""
    import importlib.util

    if importlib.util.find_spec("mujoco") is None:
        raise BackendUnavailable("MuJoCo arm unavailable: no module named 'mujoco' (pip install 'bt_grasp[mujoco]')")


def stretch(profile: Any, gui: bool = False, lighting: str = "easy", image_size: int | None = None,
            dry_run: bool = False) -> Driver:
    """A Stretch: real (stretch_body) or simulated, as the profile's driver_options.backend says."""
    try:
        from bt_grasp.drivers.stretch.factory import make_stretch_driver
    except ImportError as exc:
        raise BackendUnavailable(f"Stretch driver unavailable: {exc} "
                                 "(pip install 'bt_grasp[stretch-sim]')") from None
    return make_stretch_driver(profile, dry_run=dry_run, gui=gui)
