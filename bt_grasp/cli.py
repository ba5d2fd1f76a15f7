"""bt-grasp: run, validate, verify and look at grasping behavior trees.

Bad input is one line `file:line:col: what is wrong`, exit code 2 — never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bt_grasp.cliargs import add_out_argument, add_verbose_argument
from bt_grasp.errors import BackendUnavailable, UserError
from bt_grasp.quiet import import_pybullet_quietly, set_verbose
from bt_grasp.run_cli import add_run_parser

EXIT_USAGE = 2


def _load(path: str):
    """A tree by shipped name or path; BT.CPP XML is imported on the fly so verify/dot work on it."""
    from bt_grasp.resources import tree_path

    path = tree_path(path)
    if path.lower().endswith(".xml"):
        from bt_grasp.interop.btcpp_import import import_spec

        return import_spec(path)
    from bt_grasp.spec.loader import load_tree

    return load_tree(path)


def cmd_validate(args: argparse.Namespace) -> int:
    from bt_grasp.resources import TREES, shipped_path
    from bt_grasp.validate_files import validate_paths

    args.files = [f if Path(f).exists() else str(shipped_path(TREES, f) or f) for f in args.files]
    errors = validate_paths(args.files)
    for err in errors:
        print(str(err), file=sys.stderr)
    if not errors:
        for f in args.files:
            print(f"{f}: ok")
    return EXIT_USAGE if errors else 0


def cmd_verify(args: argparse.Namespace) -> int:
    from bt_grasp.verifier.core import verify_tree
    from bt_grasp.verifier.report import render

    spec = _load(args.tree)
    rates = None
    if args.rates is not None:  # checked before the search, so that a bad file fails at once
        from bt_grasp.verifier.probability.report import load_rates

        rates = load_rates(args.rates, getattr(spec, "registry", None))
    exact = args.exact or args.rates is not None  # the rates are solved on the exact run graph
    res = verify_tree(spec, max_runs=args.max_runs, time_limit=args.time_limit,
                      engine=args.engine, replay_all=args.replay_all, upper=not exact,
                      clock=args.clock)
    chance = None
    if rates is not None:
        from bt_grasp.verifier.probability.report import rate_tree

        chance = rate_tree(res, spec, rates)
    if args.json:
        out = res.to_json()
        if chance is not None:
            out["probabilities"] = chance if isinstance(chance, str) else chance.to_json()
        print(json.dumps(out))
    else:
        print("\n".join(render(res, spec.name, witness=args.witness)))
        if chance is not None:
            from bt_grasp.verifier.probability.report import render_chances

            print("\n".join(render_chances(chance, args.rates)))
    if args.witness is not None and res.proven and args.witness not in res.witnesses:
        print(f"{args.tree}: no bound named {args.witness!r} (choose one of: {', '.join(res.witnesses)})",
              file=sys.stderr)
        return EXIT_USAGE
    return 0 if res.proven and res.properties_hold else 1


def _positive(kind: type) -> Any:
    """An argparse type: a number of `kind` greater than zero."""
    def parse(text: str) -> Any:
        value = kind(text)
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be greater than 0, not {text}")
        return value
    parse.__name__ = kind.__name__
    return parse


def cmd_dot(args: argparse.Namespace) -> int:
    from bt_grasp.dot import build_graph, summary_graph, tick_graph, write_graph
    from bt_grasp.structure import structure
    from bt_grasp.trace_reader import read_trace

    src = args.file
    if src.endswith(".jsonl"):
        trace = read_trace(src)
        if args.tick is not None:
            graph = tick_graph(trace, args.tick)
        else:
            graph = summary_graph(trace)
    else:
        if args.tick is not None or args.summary:
            raise UserError("--tick and --summary need a trace (run.jsonl from `bt-grasp run --trace`)",
                            file=src)
        spec = _load(src)
        graph = build_graph(structure(spec.root), title=spec.name)
    text = write_graph(graph, args.out, force=args.force)
    if args.out is None or args.out == "-":
        sys.stdout.write(text)
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from bt_grasp.spec.schema import tree_json_schema

    print(json.dumps(tree_json_schema(), indent=2))
    return 0


def cmd_nodes(args: argparse.Namespace) -> int:
    from bt_grasp.default_registry import default_registry
    from bt_grasp.node_docs import nodes_markdown

    print(nodes_markdown(default_registry()))
    return 0


# -- parser ------------------------------------------------------------------------------------

def build_parser(command: str | None = "*") -> argparse.ArgumentParser:
    """The bt-grasp parser; every sub-command complete by default (ALL). Given the command named
    on the command line (None: none named), only that one's module is imported and the others
    are listed by name and help."""
    parser = argparse.ArgumentParser(prog="bt-grasp", description=__doc__.splitlines()[0])
    add_verbose_argument(parser, top_level=True)
    sub = parser.add_subparsers(dest="command", required=True)

    add_run_parser(sub)

    p = sub.add_parser("validate", help="check tree files; one line per error")
    p.add_argument("files", nargs="+", help="tree files or shipped tree names")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("verify", help="prove every run ends in a decision; print worst-case bounds")
    p.add_argument("tree", help="a shipped tree name (clutter) or a tree file (.yaml, BT.CPP .xml)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--max-runs", type=_positive(int), default=200_000,
                   help="stop (incomplete, not proven) after this many partial runs")
    p.add_argument("--time-limit", type=_positive(float), default=None,
                   help="stop (incomplete, not proven) after this many seconds")
    p.add_argument("--engine", choices=("auto", "symbolic", "reference"), default="auto",
                   help="symbolic (the tree's model, time left symbolic), reference (the compiled "
                        "tree itself, tick by tick where time is observed), or auto")
    p.add_argument("--clock", choices=("logical", "wall"), default="logical",
                   help="the clock a timeout's deadline is read on: logical (default, as `bt-grasp "
                        "run` keeps on a simulated robot: a tick lasts 0.05 s unless a call takes "
                        "time) or wall (a tick may run late: every timing); the same without a timeout")
    p.add_argument("--exact", action="store_true",
                   help="search on for the exact worst case where the tree's structure already "
                        "proves it decides (else its upper bounds answer after a short search)")
    p.add_argument("--replay-all", action="store_true",
                   help="replay every witness on the Runner, the tick bound's too however long")
    p.add_argument("--witness", default=None, metavar="KEY",
                   help="print the run reaching a bound, e.g. primitive:grasp, actions, ticks")
    p.add_argument("--rates", default=None, metavar="RATES.yaml",
                   help="outcome rates per node id or type: print the probability of each "
                        "decision and reason and the expected costs (docs/verify.md)")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("dot", help="Graphviz view of a tree file or a trace")
    p.add_argument("file", help="a shipped tree name, a tree .yaml or a trace .jsonl")
    p.add_argument("--tick", type=int, default=None)
    p.add_argument("--summary", action="store_true")
    add_out_argument(p, "out.dot | out.svg | out.png (default: DOT on standard output)", default=None)
    p.add_argument("--force", action="store_true", help="overwrite the output file if it exists")
    p.set_defaults(func=cmd_dot)

    p = sub.add_parser("nodes", help="print the node type reference (markdown)")
    p.set_defaults(func=cmd_nodes)

    p = sub.add_parser("schema", help="print the JSON Schema of tree files")
    p.set_defaults(func=cmd_schema)

    for module, adder, commands in EXTERNAL:
        missing = ""
        if command == ALL or command in commands:
            try:
                getattr(__import__(module, fromlist=[adder]), adder)(sub)
                continue
            except ImportError as exc:
                missing = str(exc)
        for name, text in commands.items():
            sub.add_parser(name, help=text).set_defaults(func=_unavailable(name, missing))
    for p in sub.choices.values():
        _add_verbose_everywhere(p)
    return parser


# Sub-commands defined in their own modules: imported only when named, so `bt-grasp --help`
# (which lists them with this help text) stays fast.
ALL = "*"
EXTERNAL: list[tuple[str, str, dict[str, str]]] = [
    ("bt_grasp.profile_cli", "add_profile_parser",
     {"profile": "list the shipped robot profiles or print one to copy"}),
    ("bt_grasp.watchdog.cli", "add_watchdog_parser",
     {"watchdog": "record, evaluate and calibrate the grasp Watchdog"}),
    ("bt_grasp.interop.cli", "add_interop_parsers",
     {"export": "write a tree file in another format (BehaviorTree.CPP v4 XML)",
      "import": "turn a BehaviorTree.CPP v4 XML tree into a bt_grasp tree file"}),
    ("bt_grasp.bench.cli", "add_bench_parser",
     {"bench": "clutter benchmark: trees × seeds × episodes × lighting × perception"}),
    ("bt_grasp.bench.objects_cli", "add_objects_parser",
     {"objects": "list the objects the simulated worlds can place"}),
    ("bt_grasp.mcp_server.cli", "add_serve_parser",
     {"serve": "serve the robot's tools over the Model Context Protocol"}),
    ("bt_grasp.mobile.cli", "add_scenarios_parser",
     {"scenarios": "mobile fetch-and-place recovery scenarios (simulated Stretch)"}),
    ("bt_grasp.live.watch", "add_watch_parser",
     {"watch": "follow a trace another run is writing: the tree, live"}),
    ("bt_grasp.observe.convert", "add_trace_parser",
     {"trace": "convert a recorded trace for other tools (Foxglove, Groot2, ROS 2 bags)"}),
    ("bt_grasp.observe.rosbag_perceive", "add_perceive_parser",
     {"perceive": "run the geometric perceiver on a ROS 2 bag's RGB-D frames"}),
]
# Commands that drive a simulator: pybullet is imported up front, without its banner.
_SIMULATING = {"run", "bench", "scenarios", "serve", "watchdog", "objects"}


def _unavailable(name: str, reason: str) -> Any:
    def fail(args: argparse.Namespace) -> int:
        raise BackendUnavailable(f"`bt-grasp {name}` cannot be loaded: {reason}")
    return fail


def _add_verbose_everywhere(parser: argparse.ArgumentParser) -> None:
    """-v/--verbose on a sub-command and its own sub-commands (after the name, too)."""
    if "--verbose" not in parser._option_string_actions:
        add_verbose_argument(parser)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _add_verbose_everywhere(child)


def _command_of(argv: list[str]) -> str | None:
    """The sub-command named in argv (the first word that is not an option), if any."""
    return next((a for a in argv if not a.startswith("-")), None)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(command=_command_of(argv))
    args = parser.parse_args(argv)
    set_verbose(args.verbose)
    try:
        if args.command in _SIMULATING:
            import_pybullet_quietly()
        return int(args.func(args) or 0)
    except KeyboardInterrupt:  # before a run's own handlers exist (loading, imports): one line, no traceback
        print("interrupted", file=sys.stderr)
        return 130
    except UserError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_USAGE
    except BackendUnavailable as exc:
        print(f"backend unavailable: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
    except FileNotFoundError as exc:
        print(f"{exc.filename}: file not found", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())

