"""Helpers (no tests) shared by the BT.CPP interop tests: write XML, import it, compare, run."""

from __future__ import annotations

import textwrap
from pathlib import Path

from bt_grasp.blackboard import Blackboard
from bt_grasp.compile import compile_tree
from bt_grasp.context import RunContext
from bt_grasp.interop.common import interop_registry
from bt_grasp.spec.loader import load_tree_text
from bt_grasp.verifier.tick_cap import episode_limits

ROOT = Path(__file__).resolve().parent.parent
BTCPP_DATA = ROOT / "tests" / "data" / "btcpp"


def registry():
    return interop_registry()


def write_xml(tmp_path: Path, body: str, name: str = "tree.xml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    return path


def doc(tree: str, main: str = "Main", extra: str = "", fmt: str = "4") -> str:
    """A BT.CPP v4 document with one main tree whose root element is `tree`."""
    return (f'<root BTCPP_format="{fmt}" main_tree_to_execute="{main}">\n'
            f'  <BehaviorTree ID="{main}">\n{tree}\n  </BehaviorTree>\n{extra}</root>\n')


def spec_of(text: str):
    return load_tree_text(text, registry=registry())


def tree_spec(yaml_text: str):
    return load_tree_text(textwrap.dedent(yaml_text), registry=registry())


def node_diff(a, b) -> list[str]:
    """Human-readable differences between two NodeSpec trees (empty when equal)."""
    out = []
    left, right = list(a.walk()), list(b.walk())
    if len(left) != len(right):
        out.append(f"{len(left)} nodes vs {len(right)}")
    for x, y in zip(left, right, strict=False):
        if (x.type, x.id, x.params, list(x.cases)) != (y.type, y.id, y.params, list(y.cases)):
            out.append(f"{x.type} {x.id} {x.params} != {y.type} {y.id} {y.params}")
    return out


class Harness:
    """A compiled tree ticked by hand against a scripted oracle."""

    def __init__(self, spec, oracle) -> None:
        self.ctx = RunContext(registry=registry(), oracle=oracle,
                              limits=episode_limits(spec),
                              blackboard=Blackboard({"goal.object": "mug"}))
        self.root = compile_tree(spec, self.ctx)

    def tick(self):
        self.ctx.tick += 1
        for _ in self.root.tick():
            pass
        self.ctx.clock.advance(self.ctx.clock.tick_period)
        return self.root.status

    def node(self, node_id: str):
        for n in self.root.iterate():
            if n.name == node_id:
                return n
        raise KeyError(node_id)
