"""`bt-grasp validate`: every named file checked as what it is, a tree or a robot profile.

Above both loaders, so that neither the tree loader nor the profile loader imports the other.
"""

from __future__ import annotations

from pathlib import Path

from bt_grasp.errors import UserError
from bt_grasp.profile import validate_profile
from bt_grasp.registry import Registry
from bt_grasp.spec.loader import load_tree, read_tree_file
from bt_grasp.spec.yaml_pos import load_positioned


def validate_paths(paths: list[str], registry: Registry | None = None) -> list[UserError]:
    """Load every file and collect its errors (an empty list: all valid); a tree's node errors
    come together, as one UserErrors that prints a line for each.

    A robot profile (a mapping with `driver:` or `camera:` and no `root:`) is checked as one.
    """
    errors: list[UserError] = []
    for path in paths:
        try:
            if _looks_like_profile(Path(path)):
                validate_profile(Path(path))
            else:
                load_tree(path, registry)
        except UserError as exc:
            errors.append(exc)
    return errors


def _looks_like_profile(path: Path) -> bool:
    try:
        data = load_positioned(read_tree_file(path, str(path)), str(path))
    except UserError:
        return False  # load_tree reports it
    return isinstance(data, dict) and "root" not in data and ("driver" in data or "camera" in data)
