"""Plug-ins by name: perceivers, drivers and node types found through Python entry points.

A package adds a backend without forking bt_grasp by declaring, in its own pyproject.toml,

    [project.entry-points."bt_grasp.perceivers"]   my_vlm = "my_pkg.perception:MyPerceiver"
    [project.entry-points."bt_grasp.drivers"]      my_arm = "my_pkg.robot:make_driver"
    [project.entry-points."bt_grasp.nodes"]        my_node = "my_pkg.nodes:MyLeaf"

The built-in backends are declared the same way in bt_grasp's own pyproject.toml, so there is
one lookup path. BUILTIN repeats those declarations for a checkout used without reinstalling
(its installed metadata may predate them); tests/test_plugins.py checks the two agree.

A name of the form `module:attr` (e.g. `bt_grasp.testing.faults:fault_driver`) is loaded as that
object directly, without an entry point: for a plug-in that is not installed as a package (a
test's fault-injecting driver).

Factories: a perceiver factory is called with keyword options only and returns a Perceiver
(bt_grasp.perception.types); a driver factory is called as
`factory(profile, gui=..., lighting=..., image_size=..., dry_run=...)` and returns a Driver
(bt_grasp.drivers.base). Looking a name up never imports the plug-in; loading it does, and a
plug-in that fails to import is one UserError naming the entry point (exit 2 in the CLI). This
module imports no backend, so a profile can check names here without an import circle.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib.metadata import EntryPoint, distributions
from typing import TYPE_CHECKING, Any

from bt_grasp.errors import UserError, did_you_mean

if TYPE_CHECKING:  # typing only: this module imports no backend (see above)
    from bt_grasp.drivers.base import Driver
    from bt_grasp.perception.types import Perceiver

PERCEIVERS = "bt_grasp.perceivers"
DRIVERS = "bt_grasp.drivers"
NODES = "bt_grasp.nodes"
GROUPS = {PERCEIVERS: "perceiver", DRIVERS: "driver", NODES: "node"}

BUILTIN: dict[str, dict[str, str]] = {
    PERCEIVERS: {"geometric": "bt_grasp.perception.geometric:GeometricPerceiver",
                 "sim": "bt_grasp.perception.sim_annotator:SimPerceiver"},
    DRIVERS: {"pybullet_arm": "bt_grasp.builtin_drivers:pybullet_arm",
              "mujoco_arm": "bt_grasp.builtin_drivers:mujoco_arm",
              "stretch": "bt_grasp.builtin_drivers:stretch"},
    NODES: {},
}
DEFAULT_PERCEIVER = "geometric"


_SCANNED: dict[tuple[str, ...], dict[str, dict[str, EntryPoint]]] = {}


def discover(group: str) -> dict[str, EntryPoint]:
    """name -> entry point for every installed plug-in of `group`, built-ins included.

    An installed entry point wins over the built-in table of the same name (it is the same
    declaration, read from a newer install). The installed distributions are read once per
    sys.path (reading them takes milliseconds; a profile check should not); `refresh()` after
    installing a package into a running process."""
    key = tuple(sys.path)
    if key not in _SCANNED:
        scanned: dict[str, dict[str, EntryPoint]] = {g: {} for g in GROUPS}
        for dist in distributions():  # one pass over what is installed, first on sys.path wins
            for ep in dist.entry_points:
                if ep.group in scanned:
                    scanned[ep.group].setdefault(ep.name, ep)
        _SCANNED[key] = scanned
    found = {name: EntryPoint(name, value, group) for name, value in BUILTIN.get(group, {}).items()}
    found.update(_SCANNED[key].get(group, {}))
    return found


def refresh() -> None:
    """Forget what was installed: the next lookup reads the installed distributions again."""
    _SCANNED.clear()


def names(group: str) -> list[str]:
    """The names that can be selected in `group`, sorted."""
    return sorted(discover(group))


def unknown_message(group: str, name: str) -> str:
    """'unknown perceiver 'x' (known: geometric, sim)' with a did-you-mean when one is close."""
    known = names(group)
    return (f"unknown {GROUPS[group]} '{name}'{did_you_mean(name, known)} "
            f"(known: {', '.join(known) or 'none installed'})")


def is_object_path(name: str) -> bool:
    """Is `name` a `module:attr` path rather than an entry point name?"""
    module, _, attr = name.partition(":")
    return bool(module and attr) and all(part.isidentifier() for part in (*module.split("."), *attr.split(".")))


def check_name(group: str, name: str) -> str:
    """`name` if it is installed in `group` or is a `module:attr` path (imported when loaded);
    else ValueError with the known names (for validators)."""
    if name not in discover(group) and not is_object_path(name):
        raise ValueError(unknown_message(group, name))
    return name


def load(group: str, name: str, file: str | None = None) -> Any:
    """The object an entry point names (a class or a factory). Unknown names and broken
    plug-ins (any exception while importing) are one UserError, located at `file` if given."""
    ep = discover(group).get(name)
    if ep is None and is_object_path(name):
        ep = EntryPoint(name, name, group)
    if ep is None:
        raise UserError(unknown_message(group, name), file=file)
    return load_entry_point(ep, file)


def load_entry_point(ep: EntryPoint, file: str | None = None) -> Any:
    """ep.load(), turning any failure into one line that names the entry point and its target."""
    try:
        return ep.load()
    except Exception as exc:
        detail = f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"plug-in {ep.group} '{ep.name}' = '{ep.value}' cannot be loaded: {detail} "
                        "(fix or uninstall the package that declares it)", file=file) from None


def make_perceiver(name: str = DEFAULT_PERCEIVER, file: str | None = None, **options: Any) -> Perceiver:
    """A fresh perceiver of the plug-in `name`, built with `options`; an unknown or broken
    plug-in is one UserError (located at `file` if given). The one perceiver factory: a run's
    perceiver, with the vocabulary its world needs, comes from bt_grasp.world.world_perceiver."""
    factory: Callable[..., Any] = load(PERCEIVERS, name, file=file)
    return factory(**options)


def make_driver(profile: Any, name: str | None = None, *, gui: bool = False, lighting: str = "easy",
                image_size: int | None = None, dry_run: bool = False, flag: str | None = "--driver") -> Driver:
    """The driver plug-in `name` (default: the profile's `driver:`) for `profile`. A wrong name is
    one UserError located where it was written: `flag` (None: a keyword argument, no place), or
    the profile's file."""
    factory: Callable[..., Any] = load(DRIVERS, name or profile.driver, file=flag if name else profile.source)
    return factory(profile, gui=gui, lighting=lighting, image_size=image_size, dry_run=dry_run)
