"""Structure-aware fuzzing of the input loaders: tree files, robot profiles, traces, BT.CPP XML.

Each target starts from real documents (trees/, robots/, tests/data/btcpp/, a recorded trace),
parses them, and lets Hypothesis mutate the *parsed* document — replace a value with an awkward
one (NaN, a huge integer, a newline, a deep list...), drop or add a key, wrap a value many levels
deep, rename an XML tag — then writes it back and loads it. A load must either succeed or raise
UserError whose text is one line `file:line:col: ...`; anything else is a failure, shrunk by
Hypothesis to a minimal document. Prints, per target, examples run, accepted, refused, failures.

    python tools/perf/fuzz_loaders.py [--target tree|profile|trace|xml|all] [--examples 500]
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import re
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bt_grasp.errors import UserError
from bt_grasp.tick_budget import episode_limits

ROOT = Path(__file__).resolve().parents[2]
LINE = re.compile(r"^[^\n]+:\d+:\d+: [^\n]+$")

AWKWARD = st.sampled_from([
    None, "", " ", 0, -1, 1, 10 ** 30, -(10 ** 30), 0.5, math.nan, math.inf, -math.inf, True, False,
    "x" * 5000, "line\nbreak", "nul\x00byte", "\x1b[31mred", "{goal..object}", "{goal.object}", "${nope}",
    "${", "../../../../etc/passwd", "/etc/passwd", [], {}, [[[[[]]]]], {"a": {"b": {"c": None}}},
    ["open_gripper"] * 3, {"sequence": {"children": []}}, {"include": {"file": "/etc/passwd"}},
    "open_gripper", "grasp", "é", "🤖"])


def _paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (keys / indices) into a parsed document, root included."""
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*prefix, i))
    return out


def _set(doc: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return doc


def _get(doc: Any, path: tuple) -> Any:
    for key in path:
        doc = doc[key]
    return doc


@st.composite
def mutated(draw: Any, seeds: list[Any]) -> Any:
    """A seed document with 1-4 structural mutations."""
    doc = copy.deepcopy(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(_paths(doc)))
        op = draw(st.sampled_from(["replace", "delete", "add_key", "deepen", "duplicate"]))
        target = _get(doc, path)
        if op == "replace":
            doc = _set(doc, path, copy.deepcopy(draw(AWKWARD)))
        elif op == "delete" and path:
            parent = _get(doc, path[:-1])
            del parent[path[-1]]
        elif op == "add_key" and isinstance(target, dict):
            target[draw(st.sampled_from(["id", "child", "children", "colour", "on", "<<", "tree", "root"]))] = \
                copy.deepcopy(draw(AWKWARD))
        elif op == "deepen":
            value = target
            for _ in range(draw(st.sampled_from([1, 5, 70, 300]))):
                value = draw(st.sampled_from([[value], {"force_success": {"child": value}}]))
            doc = _set(doc, path, value)
        elif op == "duplicate" and isinstance(target, list):
            target.extend(copy.deepcopy(target) * draw(st.integers(1, 3)))
    return doc


# -- targets ----------------------------------------------------------------------------------

def _yaml(doc: Any) -> str:
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False, width=10 ** 6)


def load_tree_doc(doc: Any, tmp: Path) -> None:
    from bt_grasp.spec.loader import load_tree

    path = tmp / "fuzz.yaml"
    path.write_text(_yaml(doc), encoding="utf-8")
    load_tree(path)


def load_profile_doc(doc: Any, tmp: Path) -> None:
    from bt_grasp.profile import validate_profile

    path = tmp / "profile.yaml"
    path.write_text(_yaml(doc), encoding="utf-8")
    validate_profile(path)


def load_trace_doc(doc: Any, tmp: Path) -> None:
    from bt_grasp.dot import summary_graph, tick_graph
    from bt_grasp.trace_reader import read_trace

    path = tmp / "run.jsonl"
    records = doc if isinstance(doc, list) else [doc]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    trace = read_trace(path)
    summary_graph(trace)
    if trace.ticks:
        tick_graph(trace, trace.ticks[0]["tick"])


def load_xml_doc(doc: Any, tmp: Path) -> None:
    from bt_grasp.interop.btcpp_import import import_btcpp

    path = tmp / "tree.xml"
    path.write_text(_to_xml(doc), encoding="utf-8")
    import_btcpp(path)


def _from_xml(el: ET.Element) -> dict[str, Any]:
    return {"tag": el.tag, "attrib": dict(el.attrib), "children": [_from_xml(c) for c in el]}


def _to_xml(doc: Any) -> str:
    def build(d: Any) -> ET.Element:
        if not isinstance(d, dict):
            return ET.Element(re.sub(r"\W", "_", str(d)) or "x")
        el = ET.Element(re.sub(r"[^\w.-]", "_", str(d.get("tag"))) or "x")
        attrib = d.get("attrib") if isinstance(d.get("attrib"), dict) else {}
        for k, v in attrib.items():
            name = re.sub(r"[^\w.-]", "_", str(k)) or "a"
            el.set(name if name[0].isalpha() else "a" + name, re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", "", str(v)))
        for c in d.get("children") or [] if isinstance(d.get("children"), list) else []:
            el.append(build(c))
        return el

    return ET.tostring(build(doc), encoding="unicode")


def seeds(target: str, tmp: Path) -> list[Any]:
    if target == "tree":
        return [yaml.safe_load(p.read_text()) for p in sorted((ROOT / "trees").glob("*.yaml"))]
    if target == "profile":
        return [yaml.safe_load(p.read_text()) for p in sorted((ROOT / "robots").glob("*.yaml"))]
    if target == "xml":
        return [_from_xml(ET.parse(p).getroot()) for p in sorted((ROOT / "tests/data/btcpp").glob("*.xml"))]
    return [_recorded_trace(tmp)]


def _recorded_trace(tmp: Path) -> list[Any]:
    """A real trace: trees/open_loop.yaml run against a random oracle (no robot)."""
    from bt_grasp.blackboard import Blackboard
    from bt_grasp.context import RunContext
    from bt_grasp.oracles import RandomOracle
    from bt_grasp.runner import Runner
    from bt_grasp.spec.loader import load_tree

    spec = load_tree(ROOT / "trees" / "open_loop.yaml")
    ctx = RunContext(registry=spec.registry, limits=episode_limits(spec),
                     oracle=RandomOracle(3), blackboard=Blackboard({"goal.object": "mug"}))
    path = tmp / "seed.jsonl"
    Runner(spec, ctx, trace_path=str(path)).run()
    return [json.loads(line) for line in path.read_text().splitlines()]


LOADERS = {"tree": load_tree_doc, "profile": load_profile_doc, "trace": load_trace_doc, "xml": load_xml_doc}


def fuzz(target: str, examples: int, seed: int | None = None) -> dict[str, int]:
    """Run one target; raises (after shrinking) on the first failure. Returns the tally."""
    tally = {"examples": 0, "accepted": 0, "refused": 0}
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        loader = LOADERS[target]

        @settings(max_examples=examples, deadline=None, database=None, derandomize=seed is not None,
                  suppress_health_check=list(HealthCheck))
        @given(mutated(seeds(target, tmp)))
        def check(doc: Any) -> None:
            tally["examples"] += 1
            try:
                loader(doc, tmp)
            except UserError as exc:
                assert all(LINE.match(line) for line in str(exc).split("\n")), f"not located lines: {str(exc)[:300]!r}"
                tally["refused"] += 1
                return
            tally["accepted"] += 1

        check()
    return tally


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="all", choices=[*LOADERS, "all"])
    ap.add_argument("--examples", type=int, default=500)
    ap.add_argument("--seed", type=int, default=None, help="derandomize (same examples every run)")
    args = ap.parse_args()
    for target in (LOADERS if args.target == "all" else [args.target]):
        start = time.perf_counter()
        t = fuzz(target, args.examples, args.seed)
        secs = time.perf_counter() - start
        print(f"{target:8s} examples {t['examples']:5d}  accepted {t['accepted']:5d}  refused {t['refused']:5d}"
              f"  failures 0  ({t['examples'] / secs:.0f} examples/s)")


if __name__ == "__main__":
    main()
