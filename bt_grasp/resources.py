"""Shipped trees and robot profiles, found by name wherever bt_grasp is installed.

The repository keeps them in `trees/` and `robots/` at its root; a wheel maps them into the
package (`bt_grasp/trees`, `bt_grasp/robots`, see pyproject.toml). So a plain install reads them
through importlib.resources, while a source checkout (PYTHONPATH or an editable install) reads the
folders at the checkout root, i.e. the files being edited.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from bt_grasp.errors import UserError, did_you_mean

TREES = "trees"
ROBOTS = "robots"
_PACKAGE_DIR = Path(__file__).resolve().parent


def shipped_dir(kind: str) -> Path:
    """The folder of shipped `trees` or `robots` for this installation."""
    installed = resources.files("bt_grasp") / kind
    if isinstance(installed, Path) and installed.is_dir():
        return installed
    checkout = _PACKAGE_DIR.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / kind).is_dir():
        return checkout / kind
    raise FileNotFoundError(f"bt_grasp is installed without its {kind}/ folder ({installed})")


def shipped_names(kind: str) -> list[str]:
    """Names usable instead of a path: file stems, with the subfolder for nested trees (mobile/...)."""
    root = shipped_dir(kind)
    return sorted(p.relative_to(root).with_suffix("").as_posix() for p in root.rglob("*.yaml"))


def shipped_path(kind: str, name: str) -> Path | None:
    """The shipped file called `name` (with or without .yaml), or None."""
    stem = name[:-5] if name.endswith(".yaml") else name
    if not stem or Path(stem).is_absolute() or ".." in Path(stem).parts:
        return None
    candidate = shipped_dir(kind) / f"{stem}.yaml"
    return candidate if candidate.is_file() else None


def resolve(kind: str, name_or_path: str, what: str) -> Path:
    """A path as given if it exists (a path wins over a name), else the shipped file of that name.

    Anything else is a one-line UserError listing the shipped names.
    """
    given = Path(name_or_path)
    if given.exists():
        return given
    found = shipped_path(kind, name_or_path)
    if found is not None:
        return found
    names = shipped_names(kind)
    hint = did_you_mean(Path(name_or_path).stem, names)
    raise UserError(f"{what} not found: no such file and no shipped {what} of that name{hint} "
                    f"(shipped: {', '.join(names) or 'none'})", file=name_or_path)


def tree_path(name_or_path: str) -> str:
    """A tree argument (`clutter` or `path/to/tree.yaml`) as a file path string."""
    return str(resolve(TREES, name_or_path, "tree"))


def profile_path(name_or_path: str) -> Path:
    """A robot argument (`stretch3` or `path/to/profile.yaml`) as a file path."""
    return resolve(ROBOTS, name_or_path, "robot profile")
