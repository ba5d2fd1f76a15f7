"""Shared test helpers: load a tree from text and run it against an oracle (no robot) or a
driver (tests/fakes.py has fake ones); start a `bt-grasp run` that never ends; for the BT.CPP
interop tests, write XML, load it with the interop registry, compare trees, tick one by hand; and
find the file paths a doc or a source file cites; load a script of the checkout (tools/, .ci/) as a
module."""

from __future__ import annotations

import importlib.util
import io
import re
import subprocess
import sys
import textwrap
import time
import tokenize
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from bt_grasp.blackboard import Blackboard
from bt_grasp.compile import compile_tree
from bt_grasp.context import RunContext
from bt_grasp.default_registry import default_registry
from bt_grasp.interop.common import interop_registry
from bt_grasp.observers import RunObserver
from bt_grasp.runner import EpisodeResult, Runner
from bt_grasp.tick_budget import episode_limits

ROOT = Path(__file__).resolve().parent.parent


# A retried grasp after a survey: "grasp" answers as the test scripts it.
RETRYING = """
    tree: t
    budgets: {actions: 5, perception_streak: 3}
    root: {selector: {children: [
        sequence: {children: [survey_scene: {id: survey}, retry: {id: attempts, attempts: 3, child: {grasp: {id: grasp}}},
                              finalize: {reason: held}]},
        wait_clarify: {reason: gave up}]}}
"""


def retrying_context(grasps: list[str]) -> RunContext:
    """A context for RETRYING: 5 actions, 3 perception calls in a row, 100 ticks."""
    from bt_grasp.context import EpisodeLimits
    from bt_grasp.oracles import ScriptedOracle

    ctx = RunContext(registry=default_registry(), limits=EpisodeLimits(5, 3, 100),
                     oracle=ScriptedOracle({"grasp": grasps}), blackboard=Blackboard({"goal.object": "mug"}))
    ctx.run_id = "fixed"
    return ctx


def arm_world(image_size: int = 256):
    """The PyBullet UR5e with simulator-annotation perception and the profile's services: the
    world the MCP and termination tests drive (the caller closes it)."""
    from bt_grasp.drivers.pybullet_arm import PyBulletArm
    from bt_grasp.perception.backends import make_perceiver
    from bt_grasp.profile import load_profile
    from bt_grasp.world import World, make_services

    profile = load_profile("ur5e_robotiq")
    return World(profile, PyBulletArm(profile, image_size=image_size), make_perceiver("sim"),
                 make_services(profile))


def tree(text: str, file: str = "<test>.yaml"):
    from bt_grasp.spec.loader import load_tree_text

    return load_tree_text(textwrap.dedent(text), file=file, base_dir=ROOT / "trees")


def run_oracle(spec, oracle, goal: str = "red mug", trace: str | None = None,
               observers: Iterable[RunObserver] = (), explore_running: bool = False) -> EpisodeResult:
    """Run `spec` with `oracle` answering every leaf (`explore_running`: it also says whether a
    call that may span ticks goes on running)."""
    registry = getattr(spec, "registry", None) or default_registry()
    ctx = RunContext(registry=registry, limits=episode_limits(spec, registry), oracle=oracle,
                     blackboard=Blackboard({"goal.object": goal}), explore_running=explore_running)
    return Runner(spec, ctx, trace_path=trace, observers=observers).run()


def run_driver(text: str, robot, clock=None, trace: str | None = None) -> tuple[EpisodeResult, RunContext]:
    """Run the tree `text` on the driver `robot` (goal "mug"), on `clock` if given; the result and
    the run's context (its blackboard)."""
    spec = tree(text)
    ctx = RunContext(registry=default_registry(), limits=episode_limits(spec),
                     driver=robot, blackboard=Blackboard({"goal.object": "mug"}))
    if clock is not None:
        ctx.clock = clock
    return Runner(spec, ctx, trace_path=trace).run(), ctx


ENDLESS = """tree: endless
budgets: {max_ticks: 100000}
root:
  repeat:
    child:
      force_success:
        child:
          open_gripper: {id: open}
"""


def start_endless_run(tmp_path: Path, ready: Callable[[str], bool], timeout: float,
                      what: str) -> tuple[subprocess.Popen, Path]:
    """`bt-grasp run` of a tree that never decides on the arm, returned once `ready(trace text)`."""
    path = tmp_path / "endless.yaml"
    path.write_text(ENDLESS)
    trace = tmp_path / "run.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "bt_grasp.cli", "run", str(path), "--trace", str(trace),
                             "--image-size", "256"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT)
    deadline = time.time() + timeout
    while time.time() < deadline:
        if trace.exists() and ready(trace.read_text()):
            return proc, trace
        if proc.poll() is not None:
            pytest.fail(f"run ended early: {proc.stderr.read()}")
        time.sleep(0.01)
    proc.kill()
    pytest.fail(f"{what} in time")


# -- BT.CPP interop: trees loaded with bt_grasp.interop.common.interop_registry() ------------------

BTCPP_DATA = ROOT / "tests" / "data" / "btcpp"


def write_xml(tmp_path: Path, body: str, name: str = "tree.xml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    return path


def doc(tree: str, main: str = "Main", extra: str = "", fmt: str = "4") -> str:
    """A BT.CPP v4 document with one main tree whose root element is `tree`."""
    return (f'<root BTCPP_format="{fmt}" main_tree_to_execute="{main}">\n'
            f'  <BehaviorTree ID="{main}">\n{tree}\n  </BehaviorTree>\n{extra}</root>\n')


def spec_of(text: str):
    from bt_grasp.spec.loader import load_tree_text

    return load_tree_text(text, registry=interop_registry())


def tree_spec(yaml_text: str):
    from bt_grasp.spec.loader import load_tree_text

    return load_tree_text(textwrap.dedent(yaml_text), registry=interop_registry())


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
        self.ctx = RunContext(registry=interop_registry(), oracle=oracle,
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


# --- Citations: the repository files a text names (tests/test_docs_paths.py, test_code_paths.py).
# A citation is a path with a directory prefix among CITED_PREFIXES and a file suffix, anywhere in
# the text, taken from the repository root; the target of a markdown link, taken from the citing
# doc's folder; and "DESIGN" (DESIGN.md, "DESIGN §2"). `notes/` and DESIGN.md are cited so that a
# citation of a file kept outside the repository fails: readers of the repository do not have it.
# URLs, globs (`trees/*.yaml`) and placeholders (`trees/<name>.yaml`) are not citations.
CITED_PREFIXES = ("bt_grasp", "tests", "tools", "trees", "docs", "robots", ".ci", "notes")

# A token that starts with a cited prefix, not in the middle of another path or a URL.
_TOKEN = re.compile(r"(?<![\w./:-])(?:" + "|".join(re.escape(p) for p in CITED_PREFIXES)
                    + r")/[^\s`'\"()\[\],;|]*")
_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_DESIGN = re.compile(r"(?<![\w./-])DESIGN(?:\.md)?\b")
_HAS_SUFFIX = re.compile(r"[^/]\.[A-Za-z0-9]+$")
_NOT_A_PATH = set("*?<>{}$")


def _file_path(token: str) -> str | None:
    """The path a token names, or None when it is no single file (a folder, glob, placeholder)."""
    token = re.sub(r"(:\d+)+:?$", "", token.split("#", 1)[0].rstrip(".!?"))  # file:line:col
    token = token.rstrip(".:")
    if not token or _NOT_A_PATH & set(token) or "://" in token:
        return None
    return token if _HAS_SUFFIX.search(token.rsplit("/", 1)[-1]) else None


def cited_paths(text: str, folder: Path | None) -> set[Path]:
    """The files `text` cites, as absolute paths; markdown links only for a doc in `folder`."""
    found: set[Path] = set()
    for match in _TOKEN.finditer(text):
        path = _file_path(match.group(0))
        if path:
            found.add(ROOT / path)
    if _DESIGN.search(text):
        found.add(ROOT / "DESIGN.md")
    for match in _LINK.finditer(text) if folder is not None else ():
        target = match.group(1)
        if re.match(r"^[a-zA-Z][\w+.-]*:", target) or target.startswith(("#", "/")):
            continue  # a URL, mailto:, an anchor in the same page, a site path
        path = _file_path(target)
        if path:
            found.add((folder / path).resolve())
    return found


def comments_and_strings(source: str) -> str:
    """The comments, docstrings and string literals of Python source, one per line: the parts
    that speak to a reader (code like `ROOT / "trees"` is not a citation)."""
    kinds = {tokenize.COMMENT, tokenize.STRING}
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return "\n".join(token.string for token in tokens if token.type in kinds)


def load_script(relative: str):
    """A script of the checkout (tools/, .ci/: no packages) as a module, loaded from its file and
    registered under its stem (dataclasses look their module up while the file runs)."""
    path = ROOT / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
