"""Tree files -> TreeSpec: top-level keys, budgets, user node classes, params and includes.

One `_Loader` serves a whole load (the top file and everything it includes), so includes share
the include chain (for cycle detection), the list of included files and the registry.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bt_grasp.default_registry import default_registry
from bt_grasp.errors import UserError, UserErrors, did_you_mean, excerpt, one_or_all
from bt_grasp.registry import Registry
from bt_grasp.spec.includes import (
    MAX_INCLUDES,
    ParamValue,
    bind_params,
    declared_params,
    include_roots,
    resolve_include,
    substitute,
)
from bt_grasp.spec.model import Budgets, NodeSpec, Pos, TreeSpec
from bt_grasp.spec.parse import fail, parse_node, record
from bt_grasp.spec.properties import parse_properties
from bt_grasp.spec.validate import assign_ids, check_labels, check_unique_ids, file_nodes, splice_includes
from bt_grasp.spec.yaml_pos import (
    MAX_BYTES,
    PosDict,
    PosList,
    at_include,
    decode_text,
    kind_name,
    load_positioned,
    plain,
)

MAX_BUDGET = 1_000_000  # any budget; bounds stay small enough to prove and to print
TOP_KEYS = ("tree", "description", "goal", "budgets", "params", "nodes", "root", "properties")
INCLUDE_KEYS = ("file", "params", "id")
NOT_A_TREE = "not a tree: expected a mapping with 'tree:' (a name) and 'root:' (the root node)"


@dataclass
class _Doc:
    """One loaded file: its positioned top-level mapping and its root (includes spliced)."""

    data: PosDict
    root: NodeSpec


def copy_registry(reg: Registry) -> Registry:
    """A registry holding the same types, so user classes do not leak into the shared default."""
    new = Registry()
    for nt in reg:
        new.add(nt)
    return new


def read_tree_file(path: Path, display: str, pos: Pos | None = None) -> str:
    """The file's text, or one error at `pos` (the include naming it) or in the file."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES and path.is_file():
            raise at_include(f"file is {size / 1e6:.1f} MB; tree files are limited to {MAX_BYTES // 1024} kB "
                      "(split it with include:)", display, pos, Pos(display, 1, 1))
        return decode_text(path.read_bytes(), display, pos)
    except FileNotFoundError:
        raise at_include("no such file", display, pos) from None
    except IsADirectoryError:
        raise at_include("is a directory, not a tree file", display, pos) from None
    except OSError as exc:
        raise at_include(f"cannot read: {exc.strerror}", display, pos) from None


class _Loader:
    """Reads a tree file and the files it includes. It is the ParseContext of node parsing:
    counts, errors and the registry span the whole tree; `base_dir` is the folder of the file
    being parsed, against which its includes resolve."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._copied = False
        self.includes: list[str] = []
        self.user_nodes: list[str] = []
        self.stack: list[tuple[Path, str]] = []
        self.depth = 0  # node nesting, across includes (ParseContext)
        self.nodes = 0  # nodes parsed so far, across includes
        self.expansions = 0  # include nodes expanded
        self.roots: list[Path] = []  # folders includes may be read from
        self.errors: list[UserError] = []  # node errors of the whole tree so far (parse.record)
        self.base_dir = Path()  # set by load_doc to the folder of the file it parses

    # -- one file --------------------------------------------------------------------------
    def load_doc(self, text: str, display: str, base_dir: Path, given: dict[str, ParamValue],
                 given_key_pos: dict[str, Pos], where: Pos | None) -> _Doc:
        data = load_positioned(text, display)
        data = self._check_shape(data, display)
        if where is not None and "properties" in data:
            raise fail("properties: belong in the top tree file (they speak of the whole run)",
                       data.key_pos["properties"])
        self._register_user_nodes(data, _file_folder(display))
        declared = declared_params(data.get("params"), data.val_pos.get("params", data.pos))
        params = bind_params(declared, given, given_key_pos, where or Pos(display, 1, 1))
        root_raw, root_pos = substitute(data["root"], data.val_pos["root"], params)
        outer, self.base_dir = self.base_dir, base_dir
        try:
            root = parse_node(root_raw, root_pos, self)
        except UserError as exc:  # the root itself: recorded with what its sub-nodes gave
            record(self, exc)
            raise one_or_all(self.errors) from None
        finally:
            self.base_dir = outer  # the including file goes on parsing after its include node
        if self.errors:
            raise one_or_all(self.errors)
        own = list(file_nodes(root))
        check_unique_ids(own, only_given=True)
        # Included nodes are about to be prefixed "<include id>/", so they never clash with a
        # generated "<type>_<n>"; only this file's explicit ids constrain generation.
        assign_ids(root, {n.id for n in own if n.id})
        return _Doc(data, splice_includes(root))

    def _check_shape(self, data: Any, display: str) -> PosDict:
        if data is None:
            raise UserError(f"empty file: {NOT_A_TREE}", display, 1, 1)
        if not isinstance(data, PosDict):
            pos = getattr(data, "pos", Pos(display, 1, 1))
            raise fail(f"{NOT_A_TREE}; got {kind_name(data)}", pos)
        for key in data:
            if key not in TOP_KEYS:
                raise fail(f"unknown top-level key '{key}'{did_you_mean(str(key), TOP_KEYS)}; "
                           f"allowed: {', '.join(TOP_KEYS)}", data.key_pos[key])
        if "root" not in data:
            raise fail(f"{NOT_A_TREE}; there is no 'root:'", data.pos)
        if "tree" not in data:
            raise fail("missing 'tree:' (the tree's name)", data.pos)
        name = data["tree"]
        if not isinstance(name, str) or not name.strip():
            raise fail(f"tree must be a non-empty name, got {kind_name(name)}", data.val_pos["tree"])
        desc = data.get("description")
        if desc is not None and not isinstance(desc, str):
            raise fail(f"description must be text, got {kind_name(desc)}", data.val_pos["description"])
        goal = data.get("goal")
        if goal is not None and not isinstance(goal, PosDict):
            raise fail(f"goal must be a mapping such as {{object: \"red mug\"}}, got {kind_name(goal)}",
                       data.val_pos["goal"])
        parse_budgets(data.get("budgets"), data.val_pos.get("budgets", data.pos))
        return data

    def _register_user_nodes(self, data: PosDict, folder: Path | None) -> None:
        raw = data.get("nodes")
        if raw is None:
            return
        if not isinstance(raw, PosList):
            raise fail(f"nodes must be a list of \"package.module:Class\", got {kind_name(raw)}",
                       data.val_pos["nodes"])
        for ref, pos in zip(raw, raw.item_pos, strict=True):
            if not isinstance(ref, str):
                raise fail(f"node class must be \"package.module:Class\", got {kind_name(ref)}", pos)
            if not self._copied:
                self.registry, self._copied = copy_registry(self.registry), True
            try:
                self.registry.load_user_class(ref, folder)
            except UserError as exc:
                raise fail(exc.message, pos) from None
            except Exception as exc:  # a user module that fails on import must not crash validate
                raise fail(f"cannot load node class '{ref}': {type(exc).__name__}: {exc}", pos) from None
            if ref not in self.user_nodes:
                self.user_nodes.append(ref)

    # -- includes ----------------------------------------------------------------------------
    def include(self, type_name: str, fields: PosDict, pos: Pos) -> NodeSpec:
        for key in fields:
            if key not in INCLUDE_KEYS:
                raise fail(f"unknown field '{key}' for {type_name}{did_you_mean(str(key), INCLUDE_KEYS)}"
                           f"; allowed: {', '.join(INCLUDE_KEYS)}", fields.key_pos[key])
        if "file" not in fields:
            raise fail(f"{type_name} needs 'file:' (a tree file, relative to this one)", pos)
        self.expansions += 1
        if self.expansions > MAX_INCLUDES:
            raise UserErrors([fail(f"more than {MAX_INCLUDES} includes in one tree", pos)], final=True)
        path, display = resolve_include(fields["file"], fields.val_pos["file"], self.base_dir, self.stack,
                                        self.roots)
        raw_params = fields.get("params")
        given: dict[str, ParamValue] = {}
        key_pos: dict[str, Pos] = {}
        if raw_params is not None:
            if not isinstance(raw_params, PosDict):
                raise fail(f"params of {type_name} must be a mapping name: value, got "
                           f"{kind_name(raw_params)}", fields.val_pos["params"])
            for name, value in raw_params.items():
                given[name] = ParamValue(value, raw_params.val_pos[name])
                key_pos[name] = raw_params.key_pos[name]
        node = NodeSpec(type=type_name, id="", pos=pos, id_given=False)
        if "id" in fields:
            value = fields["id"]
            if not isinstance(value, str) or not value.strip():
                raise fail(f"id must be a non-empty string, got {kind_name(value)}", fields.val_pos["id"])
            node.id, node.id_given, node.id_pos = value, True, fields.val_pos["id"]
        text = read_tree_file(path, display, fields.val_pos["file"])
        self.stack.append((path, display))
        try:
            doc = self.load_doc(text, display, Path(display).parent, given, key_pos, pos)
        finally:
            self.stack.pop()
        if str(path) not in self.includes:
            self.includes.append(str(path))  # resolved (absolute); errors use the display path
        node.children = [doc.root]
        return node

    # -- the whole tree ----------------------------------------------------------------------
    def load_top(self, text: str, display: str, base_dir: Path, params: dict[str, Any] | None) -> TreeSpec:
        given = {k: ParamValue(v, None) for k, v in (params or {}).items()}
        doc = self.load_doc(text, display, base_dir, given, {}, None)
        root = doc.root
        check_unique_ids(root.walk())
        check_labels(root, self.registry)
        data = doc.data
        return TreeSpec(
            name=data["tree"],
            description=data.get("description") or "",
            goal=plain(data.get("goal") or {}),
            budgets=parse_budgets(data.get("budgets"), data.val_pos.get("budgets", data.pos)),
            root=root, file=display, source=text, includes=list(self.includes),
            user_nodes=list(self.user_nodes), registry=self.registry,
            properties=parse_properties(data.get("properties"),
                                        data.val_pos.get("properties", data.pos), root, self.registry))


def _file_folder(display: str) -> Path | None:
    """The folder of the tree file being read (where its own node modules may lie), or None for
    text that is no file."""
    path = Path(display)
    return path.resolve().parent if path.is_file() else None


def parse_budgets(raw: Any, pos: Pos) -> Budgets:
    """The `budgets:` block: non-negative literal integers (max_ticks at least 1)."""
    budgets = Budgets()
    if raw is None:
        return budgets
    if not isinstance(raw, PosDict):
        raise fail(f"budgets must be a mapping (actions, perception_streak, max_ticks), got "
                   f"{kind_name(raw)}", pos)
    names = ("actions", "perception_streak", "max_ticks")
    for key, value in raw.items():
        vpos = raw.val_pos[key]
        if key not in names:
            raise fail(f"unknown budget '{key}'{did_you_mean(str(key), names)}; budgets are "
                       f"{', '.join(names)}", raw.key_pos[key])
        if isinstance(value, bool) or not isinstance(value, int):
            raise fail(f"budget '{key}' must be a literal integer, got {kind_name(value)}", vpos)
        low = 1 if key == "max_ticks" else 0
        if value < low:
            word = "positive" if low else "non-negative"
            raise fail(f"budget '{key}' must be a {word} integer, got {value}", vpos)
        if value > MAX_BUDGET:
            raise fail(f"budget '{key}' must be at most {MAX_BUDGET}, got {excerpt(value)}", vpos)
        setattr(budgets, key, value)
    return budgets


# -- public API ---------------------------------------------------------------------------------

def load_tree(path: str | Path, registry: Registry | None = None,
              params: dict[str, Any] | None = None,
              include_paths: list[str | Path] | None = None) -> TreeSpec:
    """Load and validate a tree file; raises UserError (one line, file:line:col) when it is wrong.

    `params` overrides the defaults of the file's `params:` block. User node classes listed in
    `nodes:` are registered into a copy of `registry`, returned as `TreeSpec.registry`.
    Includes may read files under the tree's folder and `include_paths` (docs/tree-format.md).
    """
    display = str(path)
    p = Path(path)
    text = read_tree_file(p, display)
    loader = _Loader(registry or default_registry())
    loader.roots = include_roots(p.parent, include_paths)
    loader.stack.append((p.resolve(), display))
    return loader.load_top(text, display, p.parent, params)


def load_tree_text(text: str, file: str = "<string>", registry: Registry | None = None,
                   base_dir: str | Path | None = None, params: dict[str, Any] | None = None,
                   include_paths: list[str | Path] | None = None) -> TreeSpec:
    """Like load_tree, from text; includes resolve against `base_dir` (default: file's folder)."""
    is_path = not (file.startswith("<") and file.endswith(">"))
    if base_dir is None:
        base_dir = Path(file).parent if is_path else Path.cwd()
    loader = _Loader(registry or default_registry())
    loader.roots = include_roots(Path(base_dir), include_paths)
    if is_path:
        loader.stack.append((Path(file).resolve(), file))
    return loader.load_top(text, file, Path(base_dir), params)

