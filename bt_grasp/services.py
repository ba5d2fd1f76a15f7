"""What leaves use besides the driver and the perceiver: a typed, read-only services record, and
the run's mutable memory kept apart from it.

`Services` holds the planners, the Watchdog and the optional hooks a caller may plug in; it is
frozen, so one record can be shared by every run built from a World, and an override is a
`dataclasses.replace` (services_with). `RunMemory` is what leaves leave for later ticks of the same
run (the last observation, the marks drawn, ...); a fresh one belongs to each run context.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from bt_grasp.errors import UserError

if TYPE_CHECKING:
    from bt_grasp.aim_memory import AimedGrasp
    from bt_grasp.drivers.base import Observation
    from bt_grasp.drivers.capabilities import UserChannel
    from bt_grasp.watchdog.telemetry import Telemetry
    from bt_grasp.watchdog.thresholds import WatchdogThresholds
    from bt_grasp.watchdog.verdict import Verdict


def _absent(name: str) -> Callable[..., Any]:
    """A stand-in for a planner nobody supplied: calling it says which one is missing."""
    def missing(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"this leaf calls the '{name}' service, but the run's services have none")
    return missing


@dataclass(frozen=True)
class Services:
    """The services leaves call through ctx.services (world.make_services builds the standard set)."""
    # the Watchdog: telemetry of a finished grasp -> Verdict (grasp, pick, Watchdog leaves)
    classify: Callable[[Telemetry], Verdict] = field(default_factory=lambda: _absent("classify"))
    # (observation, located object) -> ranked grasp poses (grasp, pick, search leaves)
    plan_grasps: Callable[[Any, Any], list[Any]] = field(default_factory=lambda: _absent("plan_grasps"))
    # (observation, located, scene graph, direction, distance) -> a push plan (push leaf)
    plan_push: Callable[..., Any] = field(default_factory=lambda: _absent("plan_push"))
    # checks a verdict against the scene after a grasp (Watchdog leaf); None: no second opinion
    semantic_verifier: Any = None
    # the Watchdog's thresholds for live checks during a motion; None: the defaults
    thresholds: WatchdogThresholds | None = None
    # the user channel of dialogue leaves; None: the driver's simulated user, else a terminal
    user: UserChannel | None = None
    # names a seen object's category (mobile survey); None: the lexical matcher
    category_matcher: Any = None
    # BT.CPP leaf ID -> handler(ports) -> "success" | "failure" | "running" (imported BT.CPP leaves)
    btcpp: Mapping[str, Callable[[dict[str, Any]], str]] = field(
        default_factory=lambda: MappingProxyType({}))
    # where overlays of this run are written; None: $BT_GRASP_TRACE_DIR, else ./runs/marks
    trace_dir: str | None = None

    def __getitem__(self, name: str) -> Any:
        """`ctx.services["plan_grasps"]`, as user nodes written before the record read it: the
        attribute, with a DeprecationWarning (for one release; read `ctx.services.plan_grasps`)."""
        if name not in SERVICE_NAMES:
            raise KeyError(name)
        warnings.warn(f'ctx.services["{name}"] is deprecated: read ctx.services.{name}',
                      DeprecationWarning, stacklevel=2)
        return getattr(self, name)


SERVICE_NAMES = tuple(f.name for f in fields(Services))


def services_with(base: Services, overrides: Services | Mapping[str, Any] | None) -> Services:
    """`base` with `overrides` applied: a whole record replaces it, a mapping (as the Python API
    takes) replaces the services it names; an unknown name is one line."""
    if overrides is None:
        return base
    if isinstance(overrides, Services):
        return overrides
    unknown = sorted(set(overrides) - set(SERVICE_NAMES))
    if unknown:
        raise UserError(f"services: unknown service {unknown[0]!r} (known: {', '.join(SERVICE_NAMES)})")
    return replace(base, **dict(overrides))


@dataclass
class RunMemory:
    """What leaves keep for later ticks of one run; observers read the last observation here."""
    last_observation: Observation | None = None  # the frame the perception leaf last used
    last_scene: Any = None  # its scene graph (None when it was not built)
    marks: dict[str, dict[int, Any]] = field(default_factory=dict)  # mobile: kind -> id -> mark
    shown: tuple[Any, Any] | None = None  # mobile: (observation, scene) of the last object overlay
    view: int = 0  # mobile: increments whenever the base moves (marks drawn before are stale)
    last_grasp: AimedGrasp | None = None  # the grasp last started on a located target
    # grasps that held a neighbour, known from the perceptual semantic check only (aim_memory.py)
    wrong_holds: list[AimedGrasp] = field(default_factory=list)
