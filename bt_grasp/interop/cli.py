"""`bt-grasp export` and `bt-grasp import`: BehaviorTree.CPP v4 XML in and out.

bt_grasp/cli.py calls add_interop_parsers(subparsers); each sub-command's `func(args) -> int`
returns the exit code (0 ok, 2 user error). Output files are never overwritten silently: an
existing -o path is refused unless --force is given.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from bt_grasp.cliargs import add_out_argument
from bt_grasp.errors import UserError


def _write(text: str, out: str | None, force: bool) -> None:
    if out is None or out == "-":
        sys.stdout.write(text)
        return
    path = Path(out)
    if path.exists() and not force:
        raise UserError(f"{out} exists; refusing to overwrite it (use --force)")
    path.write_text(text, encoding="utf-8")


def _parse_outcomes(items: list[str] | None) -> dict[str, list[str]]:
    """["FollowPath=success,failure,running"] -> {"FollowPath": [...]}."""
    out: dict[str, list[str]] = {}
    for item in items or []:
        node_id, sep, rest = item.partition("=")
        names = [s.strip() for s in rest.replace(";", ",").split(",") if s.strip()]
        if not sep or not node_id or not names:
            raise UserError(f"--outcomes '{item}': write ID=outcome,outcome "
                            "(e.g. FollowPath=success,failure,running)")
        out[node_id.strip()] = names
    return out


def cmd_export(args: argparse.Namespace) -> int:
    """Write a tree file as BT.CPP v4 XML."""
    from bt_grasp.interop.btcpp_export import export_btcpp
    from bt_grasp.resources import tree_path

    def produce() -> str:
        if args.format != "btcpp":  # argparse choices make this unreachable; kept for callers
            raise UserError(f"unknown export format '{args.format}' (known: btcpp)")
        return export_btcpp(tree_path(args.file))

    return _emit(produce, args)


def cmd_import(args: argparse.Namespace) -> int:
    """Read a BT.CPP v4 XML document and write an equivalent bt_grasp tree file."""
    from bt_grasp.interop.btcpp_import import import_btcpp

    return _emit(lambda: import_btcpp(args.file, outcomes=_parse_outcomes(args.outcomes),
                                      decisions=False if args.no_decisions else None), args)


def _emit(produce: Callable[[], str], args: argparse.Namespace) -> int:
    """Write what `produce` returns to args.out; a UserError is one line on stderr, exit 2."""
    try:
        _write(produce(), args.out, args.force)
    except UserError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    if args.out not in (None, "-"):
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


def add_interop_parsers(subparsers: argparse._SubParsersAction) -> None:
    """Add `export` and `import` to the bt-grasp sub-command parser."""
    exp = subparsers.add_parser(
        "export", help="write a tree file in another format (BehaviorTree.CPP v4 XML)",
        description="Export a bt_grasp tree file as BehaviorTree.CPP v4 XML with a TreeNodesModel, "
                    "so BT.CPP and Groot2 can open it. See docs/btcpp.md.")
    exp.add_argument("file", help="a shipped tree name (clutter) or a tree file (YAML)")
    exp.add_argument("--format", default="btcpp", choices=["btcpp"], help="output format")
    add_out_argument(exp, "output file (default: standard output)")
    exp.add_argument("--force", action="store_true", help="overwrite the output file if it exists")
    exp.set_defaults(func=cmd_export)

    imp = subparsers.add_parser(
        "import", help="turn a BehaviorTree.CPP v4 XML tree into a bt_grasp tree file",
        description="Import BehaviorTree.CPP v4 / Nav2 XML. BT.CPP semantics are kept (retry and "
                    "recovery budgets refill on halt); unknown nodes become opaque leaves. "
                    "See docs/btcpp.md.")
    imp.add_argument("file", help="BT.CPP XML file")
    add_out_argument(imp, "output tree file (default: standard output)")
    imp.add_argument("--force", action="store_true", help="overwrite the output file if it exists")
    imp.add_argument("--outcomes", action="append", metavar="ID=OUT,OUT",
                     help="declare what an opaque node can return (success, failure, running), "
                          "e.g. FollowPath=success,failure,running; repeatable")
    imp.add_argument("--no-decisions", action="store_true",
                     help="do not wrap a foreign tree without finalize/wait_clarify leaves in "
                          "SUCCESS -> FINALIZE / FAILURE -> WAIT_CLARIFY")
    imp.set_defaults(func=cmd_import)
