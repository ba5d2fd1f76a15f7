"""`python -m bt_grasp.examples DEST`: copy the example node and its tree into DEST, to edit."""

from __future__ import annotations

import sys
from pathlib import Path

FILES = ("my_nodes.py", "reach.yaml")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m bt_grasp.examples DEST (a folder; existing files are kept)", file=sys.stderr)
        return 2
    dest = Path(argv[0])
    dest.mkdir(parents=True, exist_ok=True)
    here = Path(__file__).resolve().parent
    for name in FILES:
        target = dest / name
        if target.exists():
            print(f"{target}: exists, kept", file=sys.stderr)
            continue
        target.write_text((here / name).read_text(encoding="utf-8"), encoding="utf-8")
        print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
