"""`bt-grasp trace convert RUN.jsonl -o OUT`: a recorded trace in another tool's format, chosen
by the output's suffix from observe/formats.py's table."""

from __future__ import annotations

import argparse
from pathlib import Path

from bt_grasp.errors import UserError
from bt_grasp.observe.formats import conversion_formats
from bt_grasp.outputs import output_error
from bt_grasp.trace_reader import read_trace


def add_trace_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("trace", help="convert a recorded trace for other tools (Foxglove, Groot2, ROS 2 bags)")
    tsub = p.add_subparsers(dest="trace_command", required=True, metavar="COMMAND")
    c = tsub.add_parser("convert", help="a trace (.jsonl) as " + ", ".join(
        f"{suffix} ({fmt.tool})" for suffix, fmt in sorted(conversion_formats().items())))
    c.add_argument("trace", help="a trace written by `bt-grasp run --trace`")
    c.add_argument("-o", "--out", required=True, help="the output file; its suffix picks the format")
    c.add_argument("--subtree", default=None, metavar="NODE",
                   help="only the part of the tree under node id NODE (.btlog: Groot2's free edition "
                        "draws at most 20 nodes)")
    c.set_defaults(func=cmd_convert)
    r = tsub.add_parser("recover", help="make a recording of a killed run whole: an .mcap gets its "
                        "summary, a ROS 2 bag its metadata.yaml")
    r.add_argument("recording", help="RUN.mcap, or a bag: RUN.db3 as recorded, or its folder")
    r.add_argument("-o", "--out", default=None,
                   help="an .mcap: write the whole file here instead of replacing RECORDING")
    r.set_defaults(func=cmd_recover)


def cmd_convert(args: argparse.Namespace) -> int:
    out = Path(args.out)
    suffix = out.suffix.lower()
    formats = conversion_formats()
    if suffix not in formats:
        known = ", ".join(sorted(formats)) or "none installed"
        raise UserError(f"cannot convert to '{suffix or out.name}' (use one of: {known})", file=args.out)
    if args.subtree and not formats[suffix].subtree:
        subtree = ", ".join(sorted(s for s, f in formats.items() if f.subtree))
        raise UserError(f"--subtree works with {subtree} only, not {suffix}", file=args.out)
    trace = read_trace(args.trace)
    try:
        write = formats[suffix].load(formats[suffix].converter or "")
        write(trace, out, **({"subtree": args.subtree} if args.subtree else {}))
    except UserError as exc:
        if exc.file is None:  # about the trace's content (an unknown --subtree): name the trace
            raise UserError(exc.message, file=args.trace) from None
        raise
    except OSError as exc:  # a full disk, a refused folder: the converter's own writes
        if out.is_file() and not isinstance(exc, IsADirectoryError):
            out.unlink(missing_ok=True)  # half a file would pass for a whole one
        raise UserError(output_error(f"{suffix} file", exc), file=args.out) from None
    print(f"wrote {out}")
    return 0


def cmd_recover(args: argparse.Namespace) -> int:
    """Rewrite a killed run's recording so standard readers open it; says what it holds."""
    path = Path(args.recording)
    if path.suffix.lower() == ".mcap":
        from bt_grasp.observe.mcap_recover import mcap_is_complete, recover_mcap

        if not path.is_file():
            raise UserError("no such MCAP file", file=args.recording)
        if mcap_is_complete(path) and args.out is None:
            print(f"{path}: already complete, left as it is")
            return 0
        messages, channels = recover_mcap(path, args.out)
        print(f"recovered {args.out or path}: {messages} messages on {channels} channels")
        return 0
    from bt_grasp.observe.rosbag_recover import recover_bag

    if args.out is not None:
        raise UserError("-o is for an .mcap; a bag is recovered in place (its metadata.yaml)",
                        file=args.recording)

    folder, messages, topics = recover_bag(path)
    print(f"recovered {folder}: metadata.yaml for {messages} messages on {topics} topics")
    return 0
