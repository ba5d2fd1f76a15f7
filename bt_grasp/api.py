"""bt_grasp from Python: build or load a tree, verify it, run it on your own driver and perceiver.

    from bt_grasp import api
    tree = api.Tree("pick", api.sequence(api.leaf("survey_scene"), api.leaf("finalize")),
                    budgets={"actions": 4})
    api.verify(tree).proven
    api.run(tree, perceiver=MyPerceiver(), on_event=print)

Every way in ends in the same validated TreeSpec the YAML loader produces (a built tree is
written out as tree-file text and loaded), so `verify`, `dot` and the exporters work on it and
a mistake is the same one-line UserError: at the Python line that built the node, at
`<string>:line:col` in YAML text, or at the key path of a dict (`<dict>:root.sequence.children[1]`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from bt_grasp.default_registry import default_registry
from bt_grasp.drivers.base import Driver
from bt_grasp.episode import close_world, run_episode
from bt_grasp.errors import UserError, UserErrors, each_error
from bt_grasp.observers import RunObserver, Tick, observers_from
from bt_grasp.outcomes import OutcomeEvent
from bt_grasp.perception.types import Perceiver
from bt_grasp.profile import RobotProfile, load_profile
from bt_grasp.quiet import import_pybullet_quietly
from bt_grasp.registry import Registry
from bt_grasp.result import EpisodeResult
from bt_grasp.services import Services, services_with
from bt_grasp.spec.model import Budgets, TreeSpec

__all__ = ["Budgets", "Driver", "EpisodeResult", "Node", "OutcomeEvent", "Perceiver", "RunObserver", "Tick",
           "Tree",
           "TreeSpec", "UserError", "as_spec", "budget", "force_failure", "force_success", "from_dict", "from_yaml",
           "include", "inverter", "leaf", "load", "node", "parallel", "repeat", "retry", "run",
           "selector", "sequence", "switch", "timeout", "verify"]


# -- building a tree in code -------------------------------------------------------------------

@dataclass
class Node:
    """A node being built; `where` is (file, line) of the call that built it, for error messages."""

    type: str
    ports: dict[str, Any] = field(default_factory=dict)
    children: list[Node] = field(default_factory=list)
    cases: dict[str, Node] = field(default_factory=dict)
    default: Node | None = None
    id: str | None = None
    where: tuple[str, int] | None = None


def _caller() -> tuple[str, int] | None:
    """The first frame outside this module: the user's line that built the node."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__") == __name__:
        frame = frame.f_back
    return (frame.f_code.co_filename, frame.f_lineno) if frame is not None else None


def node(type: str, *children: Node, id: str | None = None, cases: dict[str, Node] | None = None,
         default: Node | None = None, **ports: Any) -> Node:
    """Any node type by name: `node("grasp", id="g", target="{target}")`, children positional."""
    for child in children:
        if not isinstance(child, Node):
            raise UserError(f"a child of {type} must be a node (api.leaf(...), api.sequence(...)), "
                            f"got {child!r:.60}", *(_caller() or (None, None)))
    return Node(type, dict(ports), list(children), dict(cases or {}), default, id, _caller())


def leaf(type: str, id: str | None = None, **ports: Any) -> Node:
    """A leaf: `leaf("locate_object", target="{goal.object}", result="{target}")`."""
    return node(type, id=id, **ports)


def sequence(*children: Node, id: str | None = None, **ports: Any) -> Node:
    """Children in order until one fails (`memory=True` by default, see docs/tree-format.md)."""
    return node("sequence", *children, id=id, **ports)


def selector(*children: Node, id: str | None = None, **ports: Any) -> Node:
    """Children in order until one succeeds."""
    return node("selector", *children, id=id, **ports)


def parallel(*children: Node, id: str | None = None, **ports: Any) -> Node:
    return node("parallel", *children, id=id, **ports)


def switch(on: str, cases: dict[str, Node], default: Node | None = None, id: str | None = None,
           **ports: Any) -> Node:
    """One case per label of the key `on` ("{grasp.label}"), `default` for the rest."""
    return node("switch", id=id, cases=cases, default=default, on=on, **ports)


def retry(child: Node, attempts: int, id: str | None = None, **ports: Any) -> Node:
    """Start `child` at most `attempts` times per episode (never refilled)."""
    return node("retry", child, id=id, attempts=attempts, **ports)


def repeat(child: Node, id: str | None = None, **ports: Any) -> Node:
    return node("repeat", child, id=id, **ports)


def timeout(child: Node, id: str | None = None, **ports: Any) -> Node:
    return node("timeout", child, id=id, **ports)


def budget(child: Node, id: str | None = None, **ports: Any) -> Node:
    return node("budget", child, id=id, **ports)


def inverter(child: Node, id: str | None = None) -> Node:
    return node("inverter", child, id=id)


def force_success(child: Node, id: str | None = None) -> Node:
    return node("force_success", child, id=id)


def force_failure(child: Node, id: str | None = None) -> Node:
    return node("force_failure", child, id=id)


def include(file: str, id: str | None = None, params: dict[str, Any] | None = None) -> Node:
    """A subtree file, relative to the Tree's `base_dir` (default: the current folder)."""
    extra: dict[str, Any] = {"params": params} if params else {}
    return node("include", id=id, file=file, **extra)


class Tree:
    """A tree built in code. `spec()` validates it exactly as a tree file would be."""

    def __init__(self, name: str, root: Node, *, budgets: Budgets | dict[str, int] | None = None,
                 goal: dict[str, Any] | None = None, description: str = "", nodes: Iterable[str] = (),
                 base_dir: str | Path | None = None, registry: Registry | None = None) -> None:
        if not isinstance(root, Node):
            raise UserError(f"Tree root must be a node (api.sequence(...), api.leaf(...)), got {root!r:.60}",
                            *(_caller() or (None, None)))
        self.name, self.root, self.goal, self.description = name, root, dict(goal or {}), description
        self.budgets = vars(budgets) if isinstance(budgets, Budgets) else dict(budgets or {})
        self.nodes, self.base_dir, self.registry = list(nodes), base_dir, registry
        self.where = _caller()

    def to_dict(self) -> dict[str, Any]:
        """The tree as the data of a tree file (what `yaml.safe_dump` would write)."""
        return _tree_dict(self, self.registry or default_registry(), {})

    def spec(self) -> TreeSpec:
        """The validated TreeSpec of the tree as it is now (a fresh one on every call)."""
        registry = self.registry or default_registry()
        nodes: dict[str, Node] = {}
        data = _tree_dict(self, registry, nodes)
        return _from_data(data, registry, self.base_dir, "<api>",
                          lambda path: _node_place(path, nodes, self))


def _tree_dict(tree: Tree, registry: Registry, nodes: dict[str, Node]) -> dict[str, Any]:
    data: dict[str, Any] = {"tree": tree.name}
    if tree.description:
        data["description"] = tree.description
    if tree.goal:
        data["goal"] = tree.goal
    if tree.budgets:
        data["budgets"] = tree.budgets
    if tree.nodes:
        data["nodes"] = tree.nodes
    data["root"] = _node_dict(tree.root, registry, "root", nodes)
    return data


def _node_dict(n: Node, registry: Registry, path: str, nodes: dict[str, Node]) -> dict[str, Any]:
    """{type: {id, ports..., child|children|cases|default}}: own fields first, sub-nodes last."""
    nodes[path] = n
    inner = f"{path}.{n.type}"
    fields: dict[str, Any] = {} if n.id is None else {"id": n.id}
    fields.update({name: _plain(value) for name, value in n.ports.items()})
    nt = registry.get(n.type)
    if n.children:
        if nt is not None and nt.arity == "one" and len(n.children) == 1:
            fields["child"] = _node_dict(n.children[0], registry, f"{inner}.child", nodes)
        else:
            fields["children"] = [_node_dict(c, registry, f"{inner}.children[{i}]", nodes)
                                  for i, c in enumerate(n.children)]
    if n.cases:
        fields["cases"] = {str(k): _node_dict(c, registry, f"{inner}.cases.{k}", nodes)
                           for k, c in n.cases.items()}
    if n.default is not None:
        fields["default"] = _node_dict(n.default, registry, f"{inner}.default", nodes)
    return {n.type: fields or None}


def _plain(value: Any) -> Any:
    """Port values as tree-file data: numpy numbers and arrays and tuples become plain lists and
    numbers (a pose computed with numpy is a fine port value)."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _node_place(path: str, nodes: dict[str, Node], tree: Tree) -> tuple[str | None, int | None]:
    """(file, line) of the deepest built node on `path`, else of the Tree(...) call."""
    best = max((p for p in nodes if path == p or path.startswith(p + ".")), key=len, default=None)
    where = nodes[best].where if best is not None else tree.where
    return where if where is not None else (None, None)


# -- loading -------------------------------------------------------------------------------------

def from_yaml(text: str, file: str = "<string>", base_dir: str | Path | None = None,
              params: dict[str, Any] | None = None, registry: Registry | None = None) -> TreeSpec:
    """A tree from YAML text; errors at `<string>:line:col`."""
    from bt_grasp.spec.loader import load_tree_text

    return load_tree_text(text, file=file, registry=registry, base_dir=base_dir, params=params)


def from_dict(data: dict[str, Any], base_dir: str | Path | None = None,
              registry: Registry | None = None) -> TreeSpec:
    """A tree from the data of a tree file; errors name the key path (`<dict>:root.sequence...`)."""
    if not isinstance(data, dict):
        raise UserError(f"a tree must be a mapping with tree: and root:, got {type(data).__name__}",
                        "<dict>")
    return _from_data(data, registry or default_registry(), base_dir, "<dict>",
                      lambda path: (f"<dict>:{path}" if path else "<dict>", None))


def load(path: str | Path, params: dict[str, Any] | None = None) -> TreeSpec:
    """A tree file by path, or a shipped tree by name ("clutter")."""
    from bt_grasp.resources import tree_path
    from bt_grasp.spec.loader import load_tree

    return load_tree(tree_path(str(path)), params=params)


def as_spec(tree: Tree | TreeSpec | dict[str, Any] | str | Path) -> TreeSpec:
    """Whatever names a tree -> its validated TreeSpec (a str is a file or a shipped name)."""
    if isinstance(tree, TreeSpec):
        return tree
    if isinstance(tree, Tree):
        return tree.spec()
    if isinstance(tree, dict):
        return from_dict(tree)
    if isinstance(tree, (str, Path)):
        return load(tree)
    raise UserError(f"not a tree: {type(tree).__name__} (give an api.Tree, a dict, a TreeSpec or a file)")


def _from_data(data: dict[str, Any], registry: Registry, base_dir: str | Path | None, file: str,
               place: Callable[[str], tuple[str | None, int | None]]) -> TreeSpec:
    """Write `data` as tree-file text and load it; an error is moved from the text's line to
    `place(key path)` (the key path of the deepest key at or before that line)."""
    import yaml

    from bt_grasp.spec.loader import load_tree_text

    try:
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=10_000)
    except yaml.YAMLError as exc:
        at_file, at_line = place("")
        raise UserError(f"cannot be written as a tree file: {str(exc).splitlines()[0]}", at_file, at_line) from None
    try:
        spec = load_tree_text(text, file="<tree>", registry=registry, base_dir=base_dir)
    except UserError as exc:
        if exc.file != "<tree>":
            raise  # an included file's own error: already located in that file
        located = [UserError(e.message, *place(_path_at(text, e.line or 1))) if e.file == "<tree>" else e
                   for e in each_error(exc)]  # every error of the tree, each where the code wrote it
        raise (located[0] if len(located) == 1 else UserErrors(located)) from None
    spec.file = file
    return spec


def _path_at(text: str, line: int) -> str:
    """The key path ("root.sequence.children[1].grasp") of the last key written at or before `line`."""
    from bt_grasp.spec.yaml_pos import PosDict, PosList, load_positioned

    best = ("", 0)

    def walk(value: Any, path: str) -> None:
        nonlocal best
        if isinstance(value, PosDict):
            for key, sub in value.items():
                sub_path = f"{path}.{key}" if path else str(key)
                if value.key_pos[key].line <= line and value.key_pos[key].line >= best[1]:
                    best = (sub_path, value.key_pos[key].line)
                walk(sub, sub_path)
        elif isinstance(value, PosList):
            for i, (sub, pos) in enumerate(zip(value, value.item_pos, strict=True)):
                if pos.line <= line and pos.line >= best[1]:
                    best = (f"{path}[{i}]", pos.line)
                walk(sub, f"{path}[{i}]")

    try:
        walk(load_positioned(text, "<tree>"), "")
    except UserError:  # the text itself is refused (too deep): the error names no key path
        return ""
    return best[0]


# -- verifying and running -----------------------------------------------------------------------

def verify(tree: Tree | TreeSpec | dict[str, Any] | str | Path, max_runs: int = 200_000,
           time_limit: float | None = None, clock: str = "logical") -> Any:
    """The verifier's result (bt_grasp.verifier.VerifyResult): `proven`, `bounds`, witnesses.
    `clock`: what a timeout's deadline reads, as `bt-grasp verify --clock` (docs/verify.md)."""
    from bt_grasp.verifier.core import verify_tree

    return verify_tree(as_spec(tree), max_runs=max_runs, time_limit=time_limit, clock=clock)


def run(tree: Tree | TreeSpec | dict[str, Any] | str | Path, *, robot: str | RobotProfile | None = None,
        driver: Driver | str | None = None, perceiver: Perceiver | str | None = None,
        services: Services | Mapping[str, Any] | None = None, seed: int = 0, episode: int = 0, goal: str | None = None,
        trace: str | None = None, image_size: int | None = None, lighting: str = "easy", gui: bool = False,
        on_event: Callable[[OutcomeEvent], None] | Iterable[Callable[[OutcomeEvent], None]] = (),
        on_tick: Callable[[Tick], None] | Iterable[Callable[[Tick], None]] = (),
        observers: Iterable[RunObserver] = ()) -> EpisodeResult:
    """One episode. `driver` / `perceiver`: your own objects (the Driver and Perceiver
    protocols), plug-in names, or None for the robot profile's. A driver you pass is yours: it
    is reset for the episode but not closed. `services` override the planners and the Watchdog
    the profile sets up (bt_grasp.world.make_services): a Services record or a mapping of the
    services it replaces (bt_grasp.services.Services names them). `on_event` callbacks get every
    OutcomeEvent; `on_tick` callbacks a Tick (number, clock, visited [(node, status)], events);
    `observers` are RunObservers (bt_grasp.observers: header, every tick, final), the one
    interface the callbacks, the trace writer and the live view share."""
    from bt_grasp.world import World, build_world

    spec = as_spec(tree)
    services_with(Services(), services)  # an unknown service name fails here, before a robot starts
    profile = robot if isinstance(robot, RobotProfile) else load_profile(robot)
    watchers = observers_from(on_event=[on_event] if callable(on_event) else on_event,
                              on_tick=[on_tick] if callable(on_tick) else on_tick) + list(observers)
    own_driver = driver is None or isinstance(driver, str)
    if own_driver:  # a simulated robot may import pybullet: without its banner, as on the command line
        import_pybullet_quietly()
    made: list[World] = []  # the world whose driver was made here, to close afterwards

    def build() -> World:
        """The world (bt_grasp.world.build_world, as `bt-grasp run` builds it); built inside the
        run so a failure is its decision."""
        world = build_world(profile, perception=perceiver, gui=gui, lighting=lighting, image_size=image_size,
                            driver=driver, services=services, flags=False)
        if own_driver:
            made.append(world)
        return world

    try:
        return run_episode(spec, robot=profile, seed=seed, episode=episode, goal=goal, trace=trace,
                           lighting=lighting, image_size=image_size, world=build,
                           observers=watchers)
    finally:
        for world in made:
            close_world(world)
