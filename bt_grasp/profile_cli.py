"""`bt-grasp profile list | show NAME`: the shipped robot profiles, to read or copy.

A plain install keeps them inside the package; this prints one so a user can start their own
(`bt-grasp profile show ur5e_robotiq > my_robot.yaml`) without finding site-packages.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bt_grasp.resources import ROBOTS, profile_path, shipped_dir, shipped_names


def add_profile_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add `profile` with `list` and `show` to an argparse subparsers object."""
    prof = subparsers.add_parser("profile", help="list the shipped robot profiles or print one to copy",
                                 description="The shipped robot profiles (the YAML files --robot NAME reads).")
    sub = prof.add_subparsers(dest="profile_cmd", metavar="{list,show}")
    sub.required = True
    listing = sub.add_parser("list", help="the shipped profile names and where they are installed")
    listing.set_defaults(func=cmd_profile_list)
    show = sub.add_parser("show", help="print a profile's YAML (e.g. > my_robot.yaml to start your own)")
    show.add_argument("name", help="a shipped profile name (ur5e_robotiq, stretch3, ...) or a profile file")
    show.set_defaults(func=cmd_profile_show)
    return prof


def cmd_profile_list(args: argparse.Namespace) -> int:
    print(f"# in {shipped_dir(ROBOTS)}")
    for name in shipped_names(ROBOTS):
        print(name)
    return 0


def cmd_profile_show(args: argparse.Namespace) -> int:
    sys.stdout.write(profile_path(args.name).read_text(encoding="utf-8"))
    return 0
