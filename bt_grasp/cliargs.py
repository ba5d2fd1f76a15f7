"""Flag conventions shared by every bt-grasp sub-command (kept import-light: --help loads it)."""

from __future__ import annotations

import argparse
from typing import Any


def add_out_argument(parser: argparse.ArgumentParser, help: str, **kwargs: Any) -> None:
    """`-o/--out` for whatever a command writes; `--output` stays accepted, unlisted."""
    parser.add_argument("-o", "--out", dest="out", help=help, **kwargs)
    parser.add_argument("--output", dest="out", help=argparse.SUPPRESS, default=argparse.SUPPRESS)


def add_verbose_argument(parser: argparse.ArgumentParser, top_level: bool = False) -> None:
    """`-v/--verbose`, accepted before or after the sub-command name."""
    parser.add_argument("-v", "--verbose", action="store_true",
                        default=False if top_level else argparse.SUPPRESS,
                        help="show third-party start-up output (e.g. the pybullet banner)")
