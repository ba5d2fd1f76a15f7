"""The typed seams leaves use besides the Driver protocol: the services record names exactly the
services the leaves read, a mapping of overrides is checked against it, and every optional driver
capability a shipped driver has is implemented whole and is the one it claims."""

from __future__ import annotations

import ast
import inspect
import re
import typing
from dataclasses import FrozenInstanceError

import pytest
from helpers import ROOT

from bt_grasp.drivers import capabilities
from bt_grasp.errors import UserError
from bt_grasp.services import SERVICE_NAMES, Services, services_with

# where leaves (and what they call: overlays, imported BT.CPP leaves) read ctx.services
LEAF_CODE = ("bt_grasp/nodes", "bt_grasp/interop", "bt_grasp/mobile")


def _service_reads(folder: str) -> tuple[set[str], list[str]]:
    """(attribute names read on `<x>.services`, places that index or .get() it like a dict)."""
    names: set[str] = set()
    keyed: list[str] = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) \
                    and node.value.attr == "services":
                if node.attr in {"get", "setdefault", "pop", "update", "items", "keys"}:
                    keyed.append(f"{path.relative_to(ROOT)}:{node.lineno}")
                else:
                    names.add(node.attr)
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
                    and node.value.attr == "services":
                keyed.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return names, keyed


def test_the_services_record_has_exactly_the_services_leaves_read():
    """Every field of Services is read by some leaf code, and every service read is a field."""
    read: set[str] = set()
    for folder in LEAF_CODE:
        read |= _service_reads(folder)[0]
    assert read == set(SERVICE_NAMES)


def test_no_code_reads_services_by_string_key():
    """ctx.services is a record: nothing in the package indexes it or calls .get() on it."""
    assert _service_reads("bt_grasp")[1] == []


def test_services_are_read_only_and_overridden_by_name():
    """A record cannot be changed in place; a mapping replaces the services it names and keeps
    the others; an unknown name is one UserError naming the known ones."""
    base_services = Services(thresholds=None)
    with pytest.raises(FrozenInstanceError):
        base_services.thresholds = None  # type: ignore[misc]
    plan = lambda obs, located: []  # noqa: E731
    merged = services_with(base_services, {"plan_grasps": plan})
    assert merged.plan_grasps is plan and merged.classify is base_services.classify
    with pytest.raises(UserError, match="unknown service 'plan_grasp'.*plan_grasps"):
        services_with(base_services, {"plan_grasp": plan})


def test_a_service_read_by_its_name_still_works_for_one_release_with_a_warning():
    """User nodes written against the former dict (`ctx.services["plan_grasps"]`) keep working,
    warned; a name that is no service is a KeyError, as it was."""
    plan = lambda obs, located: []  # noqa: E731
    services = Services(plan_grasps=plan)
    with pytest.warns(DeprecationWarning, match=r"read ctx.services.plan_grasps"):
        assert services["plan_grasps"] is plan
    with pytest.raises(KeyError):
        services["plan_grasp"]


def test_a_missing_planner_says_which_one():
    with pytest.raises(RuntimeError, match="'plan_push' service"):
        Services().plan_push()


def _capabilities() -> list[type]:
    """The optional driver capabilities: runtime-checkable protocols of drivers/capabilities.py
    other than a Motion and a driver's clock (what Streaming and RealTime hand out)."""
    return [v for v in vars(capabilities).values()
            if inspect.isclass(v) and getattr(v, "_is_runtime_protocol", False)
            and v.__module__ == capabilities.__name__
            and v not in (capabilities.Motion, capabilities.TimeSource)]


def _defines(cls: type, name: str) -> bool:
    return any(name in vars(k) or name in getattr(k, "__annotations__", {}) for k in cls.__mro__)


def _shipped_drivers() -> list[type]:
    from bt_grasp.drivers.pybullet_arm import PyBulletArm
    from bt_grasp.drivers.stretch.driver import StretchDriver
    from bt_grasp.drivers.stretch.sim.driver import SimStretchDriver
    from bt_grasp.drivers.stretch.sim.household_driver import HouseholdStretchDriver

    drivers: list[type] = [PyBulletArm, StretchDriver, SimStretchDriver, HouseholdStretchDriver]
    try:
        from bt_grasp.drivers.mujoco_arm import MujocoArm
    except ImportError:  # the optional mujoco extra
        return drivers
    return [*drivers, MujocoArm]


def test_every_capability_says_who_uses_it():
    for capability in _capabilities():
        assert (capability.__doc__ or "").strip(), capability.__name__


@pytest.mark.parametrize("cls", _shipped_drivers(), ids=lambda c: c.__name__)
def test_a_shipped_driver_implements_a_capability_whole_or_not_at_all(cls):
    """A driver class defining one member of a capability defines them all, methods as methods
    and flags as booleans (a property counts: its value is per instance); other data members may
    be set per instance."""
    for capability in _capabilities():
        members = sorted(typing._get_protocol_attrs(capability))  # type: ignore[attr-defined]
        present = [m for m in members if _defines(cls, m)]
        if not present:
            continue
        assert present == members, f"{cls.__name__} has {present} of {capability.__name__}: {members}"
        for name in members:
            declared = inspect.getattr_static(cls, name, None)
            if capability.__annotations__.get(name) == "bool":  # a flag, e.g. thread_bound
                assert isinstance(declared, (bool, property)), f"{cls.__name__}.{name}"
            elif name not in capability.__annotations__:
                assert callable(declared), f"{cls.__name__}.{name}"


def test_the_stretch_driver_claims_exactly_the_capabilities_it_has():
    """Its docstring's 'Driver (+ ...)' list is the capabilities its class implements."""
    from bt_grasp.drivers.stretch.driver import StretchDriver

    claimed = re.match(r"\s*Driver \(\+ ([^)]*)\)", StretchDriver.__doc__ or "")
    assert claimed is not None
    has = {c.__name__ for c in _capabilities()
           if all(_defines(StretchDriver, m) for m in typing._get_protocol_attrs(c))}  # type: ignore[attr-defined]
    assert set(claimed.group(1).split(", ")) == has


def test_the_arms_report_their_textures_and_threads_as_the_world_builder_reads_them():
    """The MuJoCo arm draws each object in its own colour and is bound to its EGL thread; the
    PyBullet arm draws mesh textures and runs under a wall-clock limit."""
    from bt_grasp.drivers.pybullet_arm import PyBulletArm

    assert PyBulletArm.draws_mesh_textures is True and not _defines(PyBulletArm, "thread_bound")
    arms = [c for c in _shipped_drivers() if c.__name__ == "MujocoArm"]
    for arm in arms:
        assert inspect.getattr_static(arm, "draws_mesh_textures") is False
        assert inspect.getattr_static(arm, "thread_bound") is True
