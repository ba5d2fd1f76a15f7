"""bt-grasp: run, validate, verify and look at grasping behavior trees.

Bad input is one line `file:line:col: what is wrong`, exit code 2 — never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys

from bt_grasp.errors import BackendUnavailable, UserError

EXIT_USAGE = 2


def _load(path: str):
    """A tree file; BT.CPP XML is imported on the fly so verify/dot work on it directly."""
    if path.lower().endswith(".xml"):
        from bt_grasp.interop.btcpp_import import import_spec

        return import_spec(path)
    from bt_grasp.spec import load_tree

    return load_tree(path)


# -- run -------------------------------------------------------------------------------------

def cmd_run(args: argparse.Namespace) -> int:
    from bt_grasp.episode import run_episode

    result = run_episode(args.tree, robot=args.robot, seed=args.seed, episode=args.episode,
                         goal=args.goal, trace=args.trace, gui=args.gui, perception=args.perception,
                         lighting=args.lighting, image_size=args.image_size, handle_signals=True)
    if args.json:
        print(json.dumps(result.to_json()))
    else:
        print(result.summary_line())
    return result.exit_code


def cmd_validate(args: argparse.Namespace) -> int:
    from bt_grasp.spec import validate_paths

    errors = validate_paths(args.files)
    for err in errors:
        print(str(err), file=sys.stderr)
    if not errors:
        for f in args.files:
            print(f"{f}: ok")
    return EXIT_USAGE if errors else 0


def cmd_verify(args: argparse.Namespace) -> int:
    from bt_grasp.verify import verify_tree

    spec = _load(args.tree)
    res = verify_tree(spec, max_runs=args.max_runs)
    if args.json:
        print(json.dumps(res.to_json()))
        return 0 if res.proven else 1
    print(f"{spec.name}: {res.runs_explored} runs explored, {res.states} states")
    width = max(len(k) for k in res.bounds) if res.bounds else 10
    print("worst case (explored)  " + " " * max(0, width - 20) + "static bound")
    for key, value in res.bounds.items():
        static = res.static_bounds.get(key, "-")
        print(f"  {key:<{width}}  {value:>6}   {'unbounded' if static is None else static}")
    for key, n in sorted(res.endings.items(), key=lambda kv: -kv[1]):
        print(f"  ends {n:>6} x  {key}")
    for label in res.unrouted:
        print(f"  warning: switch {label} is not routed (the switch fails on it)")
    if res.proven:
        print("PROVEN: every run ends in FINALIZE or WAIT_CLARIFY")
        return 0
    if res.counterexample is None:
        print(f"NOT PROVEN: {res.problem}")
        return 1
    print(f"COUNTEREXAMPLE: {res.problem}")
    for i, step in enumerate(res.counterexample, 1):
        print(f"  {i:>3}. {step['node']} -> {step['outcome']}")
    if res.path:
        print("  last tick path: " + " ".join(res.path))
    return 1


def cmd_dot(args: argparse.Namespace) -> int:
    from bt_grasp.dot import build_graph, summary_graph, tick_graph, write_graph
    from bt_grasp.structure import structure
    from bt_grasp.trace import read_trace

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
    text = write_graph(graph, args.output)
    if args.output is None or args.output == "-":
        sys.stdout.write(text)
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from bt_grasp.spec import tree_json_schema

    print(json.dumps(tree_json_schema(), indent=2))
    return 0


# -- parser ------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bt-grasp", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("run", help="run one episode of a tree on a robot (headless PyBullet by default)")
    p.add_argument("tree")
    p.add_argument("--robot", default=None, help="robot profile: robots/<name>.yaml (default ur5e_robotiq)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--episode", type=int, default=0, help="episode index (seed + 1000 x episode)")
    p.add_argument("--goal", default=None, help='instruction, e.g. "Grasp the red mug"')
    p.add_argument("--trace", default=None, help="write a JSONL trace here")
    p.add_argument("--gui", action="store_true", help="open the PyBullet GUI")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--perception", default="sim", choices=("sim", "geometric"))
    p.add_argument("--lighting", default="easy", choices=("easy", "hard"))
    p.add_argument("--image-size", type=int, default=None)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("validate", help="check tree files; one line per error")
    p.add_argument("files", nargs="+")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("verify", help="prove every run ends in a decision; print worst-case bounds")
    p.add_argument("tree")
    p.add_argument("--json", action="store_true")
    p.add_argument("--max-runs", type=int, default=200_000)
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("dot", help="Graphviz view of a tree file or a trace")
    p.add_argument("file", help="tree .yaml or trace .jsonl")
    p.add_argument("--tick", type=int, default=None)
    p.add_argument("--summary", action="store_true")
    p.add_argument("-o", "--output", default=None, help="out.dot | out.svg | out.png")
    p.set_defaults(func=cmd_dot)

    p = sub.add_parser("schema", help="print the JSON Schema of tree files")
    p.set_defaults(func=cmd_schema)

    for module, adder in (("bt_grasp.watchdog.cli", "add_watchdog_parser"),
                          ("bt_grasp.interop.cli", "add_interop_parsers"),
                          ("bt_grasp.bench.cli", "add_bench_parser")):
        try:
            mod = __import__(module, fromlist=[adder])
        except ImportError:
            continue
        getattr(mod, adder)(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
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

