"""Every blackboard entry a leaf touches is a declared port of its exported BT.CPP element.

A C++ node written against the <TreeNodesModel> can only reach the blackboard through its
ports, so an entry a bt_grasp leaf reads or writes without a port (`{objects.best}` written by
select_target, `goal.object` rewritten by listen) would never be set in BT.CPP. Each shipped tree
is run against random oracles with the blackboard watched (that covers the writes), and every
leaf is executed once against a driver and perception that refuse every call (that covers the
reads a leaf makes before it needs the robot); every entry a leaf read must be the remapped value
of one of its input ports, every entry it wrote that of an output port.
"""

from __future__ import annotations

import contextlib
import xml.etree.ElementTree as ET
from collections import defaultdict

import pytest
from helpers import ROOT, run_oracle, write_xml

from bt_grasp.blackboard import Blackboard, ref_key
from bt_grasp.compile import compile_tree
from bt_grasp.context import RunContext
from bt_grasp.errors import UserError
from bt_grasp.interop.btcpp_export import export_btcpp
from bt_grasp.interop.btcpp_import import import_btcpp
from bt_grasp.interop.common import interop_registry
from bt_grasp.nodes.base import Leaf
from bt_grasp.nodes.catalog import leaf_types
from bt_grasp.oracles import RandomOracle
from bt_grasp.spec.loader import load_tree, load_tree_text

TREES = sorted((ROOT / "trees").rglob("*.yaml"))
SEEDS = range(12)


def _declared(xml_text: str) -> dict[str, dict[str, set[str]]]:
    """node name -> {"input": entries, "output": entries} its ports are remapped to."""
    root = ET.fromstring(xml_text)
    model = {el.get("ID"): {p.get("name"): p.tag.removesuffix("_port") for p in el
                            if p.tag.endswith("_port")}
             for el in root.find("TreeNodesModel")}
    out: dict[str, dict[str, set[str]]] = {}
    for el in root.find("BehaviorTree").iter():
        ports = model.get(el.tag)
        if ports is None:
            continue
        sides: dict[str, set[str]] = {"input": set(), "output": set()}
        for name, value in el.attrib.items():
            if name in ports and ref_key(value) is not None:
                sides[ports[name]].add(ref_key(value))
        out[el.get("name")] = sides
    return out


class _Seen(set):
    """The recorded accesses, and the stack of leaves being run."""

    def __init__(self) -> None:
        super().__init__()
        self.current: list[str] = []

    @contextlib.contextmanager
    def inside(self, node_id: str):
        self.current.append(node_id)
        try:
            yield
        finally:
            self.current.pop()


@pytest.fixture
def watched(monkeypatch):
    """Record (leaf id, 'input' | 'output', entry) for every blackboard access made inside a leaf."""
    seen = _Seen()
    current = seen.current
    update, get, set_, resolve = Leaf.update, Blackboard.get, Blackboard.set, Blackboard.resolve

    def leaf_update(self):
        current.append(self.node_id)
        try:
            return update(self)
        finally:
            current.pop()

    def note(side: str, key: str | None) -> None:
        if current and key is not None:
            seen.add((current[-1], side, key))

    monkeypatch.setattr(Leaf, "update", leaf_update)
    monkeypatch.setattr(Blackboard, "get", lambda self, key, default=None: (note("input", key), get(self, key, default))[1])
    monkeypatch.setattr(Blackboard, "set", lambda self, key, value: (note("output", key), set_(self, key, value))[1])
    monkeypatch.setattr(Blackboard, "resolve", lambda self, value: (note("input", ref_key(value)), resolve(self, value))[1])
    return seen


class _Refuses:
    """A driver / perceiver / service table on which every call fails."""

    def __getattr__(self, name: str):
        raise RuntimeError(f"no robot here ({name})")

    def __getitem__(self, name: str):
        raise RuntimeError(f"no service here ({name})")

    def get(self, name: str, default=None):
        raise RuntimeError(f"no service here ({name})")

    def setdefault(self, name: str, default=None):
        raise RuntimeError(f"no service here ({name})")


def _execute_every_leaf(spec, watched_leaf) -> int:
    """Run each leaf's execute() once, as far as it gets without a robot; returns how many ran."""
    ctx = RunContext(registry=interop_registry(), driver=_Refuses(), perceiver=_Refuses(),
                     blackboard=Blackboard({"goal.object": "red mug"}))
    ctx.services = _Refuses()
    leaves = [n for n in compile_tree(spec, ctx).iterate() if isinstance(n, Leaf)]
    for leaf in leaves:
        with watched_leaf(leaf.node_id):
            try:
                leaf.execute()
            except Exception:  # noqa: BLE001 - the refusal (or what follows from it) ends the call
                pass
    return len(leaves)


@pytest.mark.parametrize("path", TREES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_leaves_touch_only_declared_ports(watched, path):
    spec = load_tree(path, interop_registry())
    declared = _declared(export_btcpp(path))
    for seed in SEEDS:
        run_oracle(spec, RandomOracle(seed))
    assert _execute_every_leaf(spec, watched.inside) > 0
    assert {side for _, side, _ in watched} == {"input", "output"}
    undeclared = defaultdict(set)
    for node, side, key in watched:
        if key not in declared[node][side]:
            undeclared[node].add(f"{side} {key}")
    assert dict(undeclared) == {}


def test_the_check_can_fail(watched):
    """Without its derived ports select_target's `{result}.best` write is caught."""
    path = ROOT / "trees" / "fetch_and_place.yaml"
    spec = load_tree(path, interop_registry())
    declared = _declared(export_btcpp(path))
    declared["select"]["output"].discard("objects.best")
    for seed in SEEDS:
        run_oracle(spec, RandomOracle(seed))
    assert ("select", "output", "objects.best") in watched
    assert "objects.best" not in declared["select"]["output"]


def test_derived_port_names_never_shadow_real_ports():
    for nt in leaf_types():
        names = [use.port for use in nt.keys]
        assert len(names) == len(set(names)), nt.name
        assert not set(names) & set(nt.ports), nt.name


def test_tracker_entries_have_writers():
    """The entries the trees read that once had no declared writer now have one."""
    written = defaultdict(set)
    for path in TREES:
        for node, sides in _declared(export_btcpp(path)).items():
            for key in sides["output"]:
                written[key].add(node)
    for key in ("objects.best", "receptacles.best", "target.occluder", "goal.object"):
        assert written[key], key


def _fetch_xml() -> str:
    return export_btcpp(ROOT / "trees" / "fetch_and_place.yaml")


def test_import_drops_derived_ports_that_name_the_usual_entry(tmp_path):
    text = _fetch_xml()
    assert 'result_best="{objects.best}"' in text
    back = load_tree_text(import_btcpp(write_xml(tmp_path, text)), registry=interop_registry())
    select = next(n for n in back.root.walk() if n.id == "select")
    assert "result_best" not in select.params and select.params["result"] == "objects"


def test_import_refuses_a_derived_port_moved_elsewhere(tmp_path):
    """bt_grasp computes the entry from `result`: a remap elsewhere is bad input, with its line."""
    text = _fetch_xml().replace('result_best="{objects.best}" result_reason', 'result_best="{mine}" result_reason', 1)
    line = text[:text.index('result_best="{mine}"')].count("\n") + 1
    path = write_xml(tmp_path, text)
    with pytest.raises(UserError) as err:
        import_btcpp(path)
    assert (err.value.file, err.value.line) == (str(path), line)
    assert "result_best" in err.value.message and "{objects.best}" in err.value.message


@pytest.mark.parametrize("path", TREES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_round_trip_compiles_to_the_same_behaviour_tree(tmp_path, path):
    def shape(spec) -> list[tuple[int, str, str, str]]:
        ctx = RunContext(registry=interop_registry())
        root = compile_tree(spec, ctx)
        out = []

        def walk(node, depth):
            out.append((depth, type(node).__name__, node.name, repr(getattr(node, "params", None))))
            for child in node.children:
                walk(child, depth + 1)

        walk(root, 0)
        return out

    original = load_tree(path, interop_registry())
    back = load_tree_text(import_btcpp(write_xml(tmp_path, export_btcpp(path))), registry=interop_registry())
    assert shape(back) == shape(original)
