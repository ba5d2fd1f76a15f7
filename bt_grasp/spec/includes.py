"""File parameters ("${name}") and include resolution.

A file declares `params: {name: default}`; an include (or the caller of load_tree) supplies
values. Substitution happens on the positioned YAML before node validation, so a substituted
value is checked exactly like a literal, and its error points at where the value was *written*
(the include's `params:` entry, or the default) rather than at the "${name}" placeholder.
"""

from __future__ import annotations

import os.path
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bt_grasp.errors import UserError, did_you_mean, excerpt
from bt_grasp.spec.model import Pos
from bt_grasp.spec.yaml_pos import PosDict, PosList, kind_name, positioned

PARAM_NAME = re.compile(r"^[A-Za-z_]\w*$")
_PLACEHOLDER = re.compile(r"\$\{([^}]*)\}")
_WHOLE = re.compile(r"^\$\{([A-Za-z_]\w*)\}$")


def _fail(msg: str, pos: Pos) -> UserError:
    return UserError(msg, pos.file, pos.line, pos.col)


@dataclass
class ParamValue:
    """A parameter's value and where it was written (None: passed from Python/CLI)."""

    value: Any
    pos: Pos | None


def declared_params(raw: Any, pos: Pos) -> dict[str, ParamValue]:
    """The `params:` block of a file: name -> default (with its position)."""
    if raw is None:
        return {}
    if not isinstance(raw, PosDict):
        raise _fail(f"params must be a mapping of name: default, got {kind_name(raw)}", pos)
    out: dict[str, ParamValue] = {}
    for name, value in raw.items():
        if not isinstance(name, str) or not PARAM_NAME.match(name):
            raise _fail(f"parameter name '{name}' must be an identifier (letters, digits, _)",
                        raw.key_pos[name])
        out[name] = ParamValue(value, raw.val_pos[name])
    return out


def bind_params(declared: dict[str, ParamValue], given: dict[str, ParamValue],
                given_key_pos: dict[str, Pos], where: Pos) -> dict[str, ParamValue]:
    """Declared defaults overridden by given values; unknown or missing names are errors.

    A parameter declared with a null default is required.
    """
    for name in given:
        if name not in declared:
            at = given_key_pos.get(name, where)
            known = ", ".join(sorted(declared)) or "none"
            raise _fail(f"unknown parameter '{name}'{did_you_mean(str(name), declared)}; "
                        f"the included file declares: {known}", at)
    bound = {**declared, **given}
    for name, pv in bound.items():
        if pv.value is None and name not in given:
            raise _fail(f"missing parameter '{name}' (declared without a default)", where)
    return bound


def substitute(value: Any, pos: Pos, params: dict[str, ParamValue]) -> tuple[Any, Pos]:
    """Replace "${name}" in string values, recursively; returns (value, position to report).

    A whole-string placeholder keeps the parameter's type (an int stays an int, a mapping can
    be a whole node); a placeholder inside a longer string is formatted with str().
    """
    if isinstance(value, PosDict):
        out = PosDict(value.pos)
        for k, v in value.items():
            nv, npos = substitute(v, value.val_pos[k], params)
            out.put(k, nv, value.key_pos[k], npos)
        return out, pos
    if isinstance(value, PosList):
        lst = PosList(value.pos)
        for v, p in zip(value, value.item_pos, strict=True):
            nv, npos = substitute(v, p, params)
            lst.put(nv, npos)
        return lst, pos
    if not isinstance(value, str) or "${" not in value:
        return value, pos
    for m in _PLACEHOLDER.finditer(value):
        name = m.group(1)
        if not PARAM_NAME.match(name):
            raise _fail(f"malformed parameter reference '{m.group(0)}': write it like '${{name}}'", pos)
        if name not in params:
            raise _fail(f"undeclared parameter '{name}'{did_you_mean(name, params)}; "
                        "declare it under the file's params:", pos)
    whole = _WHOLE.match(value)
    if whole:
        pv = params[whole.group(1)]
        src = pv.pos or pos
        return positioned(pv.value, src), src
    return _PLACEHOLDER.sub(lambda m: _fmt(params[m.group(1)].value), value), pos


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


ROOT_MARKER = ".bt-grasp-root"  # an empty file: its folder is the include root of trees below it
INCLUDE_PATH_ENV = "BT_GRASP_INCLUDE_PATH"  # more folders includes may read, os.pathsep-separated
MAX_INCLUDE_DEPTH = 16  # files included inside included files
MAX_INCLUDES = 200  # include nodes expanded in one tree
TREE_SUFFIXES = (".yaml", ".yml")


def include_roots(tree_dir: Path, extra: list[str | Path] | None = None) -> list[Path]:
    """Folders includes may read: the tree's own folder (or, when a folder above it holds a
    `.bt-grasp-root` file, that folder), then `extra` and $BT_GRASP_INCLUDE_PATH."""
    top = tree_dir.resolve()
    own = top
    for folder in (top, *top.parents):
        if (folder / ROOT_MARKER).is_file():
            own = folder
            break
    configured = [*(extra or []), *filter(None, os.environ.get(INCLUDE_PATH_ENV, "").split(os.pathsep))]
    return [own, *(Path(p).resolve() for p in configured)]


def resolve_include(file_value: Any, pos: Pos, base_dir: Path, stack: list[tuple[Path, str]],
                    roots: list[Path]) -> tuple[Path, str]:
    """(absolute path, display path) of an include; errors for missing files, cycles, and files
    outside `roots` (the tree's folder and the configured search paths).

    A relative name is looked up next to the including file, then in each search path.
    `stack` is the chain of files being loaded, outermost first, as (absolute, display).
    """
    if not isinstance(file_value, str) or not file_value:
        raise _fail(f"include file must be a path string, got {kind_name(file_value)}", pos)
    if "\x00" in file_value or not file_value.endswith(TREE_SUFFIXES):
        raise _fail(f"include file '{excerpt(file_value)}' must be a tree file ending in .yaml or .yml", pos)
    if len(stack) > MAX_INCLUDE_DEPTH:
        raise _fail(f"includes nested deeper than {MAX_INCLUDE_DEPTH} files", pos)
    candidates = [base_dir / file_value] + [root / file_value for root in roots[1:]]
    inside = [c for c in candidates if any(_within(c.resolve(), r) for r in roots)]
    if not inside:
        where = ", ".join(str(r) for r in roots)
        raise _fail(f"include '{excerpt(file_value)}' is outside the folders includes may read ({where}); "
                    f"copy the file there, or add its folder to {INCLUDE_PATH_ENV}", pos)
    display_path = next((c for c in inside if c.resolve().is_file()), inside[0])
    path = display_path.resolve()
    display = os.path.normpath(str(display_path))
    for i, (seen, _) in enumerate(stack):
        if seen == path:
            chain = " -> ".join([d for _, d in stack[i:]] + [display])
            raise _fail(f"include cycle: {chain}", pos)
    if not path.is_file():
        raise _fail(f"included file '{excerpt(file_value)}' not found (looked for {display})", pos)
    return path, display


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
