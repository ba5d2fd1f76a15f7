"""Reading one BT.CPP v4 document for the importer: its trees, fresh node ids, port values.

The element-by-element conversion (bt_grasp.interop.btcpp_elements) builds on this state; every
error names the element's file:line:col.
"""

from __future__ import annotations

import json
import re
from typing import Any

from bt_grasp.errors import UserError, did_you_mean
from bt_grasp.interop.common import (
    BARE_ATTR,
    OUTCOMES_ATTR,
    SCRIPT_ATTRS,
)
from bt_grasp.interop.nodes import DEFAULT_OUTCOMES, OUTCOME_STATUS
from bt_grasp.interop.xml_read import El
from bt_grasp.registry import NodeType, Registry

SUPPORTED_FORMAT = "4"
BRACE_REF = re.compile(r"^\{(.*)\}$")
_BAD_ID_CHARS = re.compile(r"[^\w\-/]")
STATIC_KINDS = ("composite", "decorator")


class RemappedLiteral(str):
    """A SubTree port remapped to a literal value instead of a blackboard entry."""


class DocumentReader:
    """The document being imported, the ids handed out so far and the SubTree stack."""

    def __init__(self, root: El, file: str, registry: Registry,
                 outcomes: dict[str, list[str]] | None) -> None:
        self.root = root
        self.file = file
        self.reg = registry
        self.outcome_overrides = {k: list(v) for k, v in (outcomes or {}).items()}
        self.trees: dict[str, Any] = {}
        self.model: dict[str, El] = {}
        self.taken: set[str] = set()
        self.counters: dict[str, int] = {}
        self.stack: list[str] = []

    def err(self, msg: str, el: El | None) -> UserError:
        return UserError(msg, self.file, el.line if el else None, el.col if el else None)

    # -- document --------------------------------------------------------------------------
    def document(self) -> tuple[El, str]:
        root = self.root
        if root.tag != "root":
            raise self.err(f"not a BehaviorTree.CPP document: the top element is <{root.tag}>, "
                           "expected <root BTCPP_format=\"4\">", root)
        fmt = root.attrib.get("BTCPP_format")
        if fmt is None:
            raise self.err('missing BTCPP_format: bt_grasp imports BehaviorTree.CPP v4 XML, '
                           'written <root BTCPP_format="4">; convert a v3 file with BT.CPP\'s '
                           'convert_v3_to_v4 script first', root)
        if fmt.strip() != SUPPORTED_FORMAT:
            raise self.err(f"unsupported BTCPP_format \"{fmt}\": bt_grasp imports format "
                           f"{SUPPORTED_FORMAT} (BehaviorTree.CPP v4)", root)
        for child in root.children:
            if child.tag == "BehaviorTree":
                tree_id = child.attrib.get("ID")
                if not tree_id:
                    raise self.err("<BehaviorTree> needs an ID attribute", child)
                if tree_id in self.trees:
                    raise self.err(f"duplicate BehaviorTree ID '{tree_id}'", child)
                if len(child.children) != 1:
                    raise self.err(f"<BehaviorTree ID=\"{tree_id}\"> must have exactly one root "
                                   f"node, has {len(child.children)}", child)
                self.trees[tree_id] = child
            elif child.tag == "TreeNodesModel":
                for entry in child.children:
                    if "ID" in entry.attrib:
                        self.model[entry.attrib["ID"]] = entry
            elif child.tag == "include":
                raise self.err("<include> of other XML files is not supported: merge the files "
                               "into one document", child)
        if not self.trees:
            raise self.err("the document has no <BehaviorTree>", root)
        main = root.attrib.get("main_tree_to_execute")
        if main is None:
            if len(self.trees) != 1:
                raise self.err(f"{len(self.trees)} BehaviorTrees and no main_tree_to_execute: say "
                               f"which one to import ({', '.join(self.trees)})", root)
            main = next(iter(self.trees))
        if main not in self.trees:
            raise self.err(f"main_tree_to_execute names unknown tree '{main}'"
                           f"{did_you_mean(main, self.trees)}; trees: {', '.join(self.trees)}", root)
        return self.trees[main], main

    # -- ids ---------------------------------------------------------------------------------
    def new_id(self, wanted: str | None, node_type: str, prefix: str) -> str:
        if wanted:
            base = _BAD_ID_CHARS.sub("_", wanted.strip())
            if not base or not (base[0].isalpha() or base[0] == "_"):
                base = "n_" + base
        else:
            n = self.counters.get(node_type, 0) + 1
            self.counters[node_type] = n
            base = f"{node_type}_{n}"
        base = prefix + base
        candidate, k = base, 1
        while candidate in self.taken:
            k += 1
            candidate = f"{base}_{k}"
        self.taken.add(candidate)
        return candidate

    # -- values ----------------------------------------------------------------------------
    def rename(self, raw: str, port: str, ns) -> str:
        """Apply the SubTree blackboard mapping to one attribute value."""
        m = BRACE_REF.match(raw.strip())
        if not m:
            return raw
        key = m.group(1).strip()
        if key == "=":
            key = port
        if key.startswith("@"):
            return "{" + key[1:] + "}"
        mapped = ns(key)
        return str(mapped) if isinstance(mapped, RemappedLiteral) else "{" + mapped + "}"

    def convert(self, nt: NodeType, name: str, raw: str, el: El) -> Any:
        port = nt.ports[name]
        is_ref = BRACE_REF.match(raw.strip()) is not None
        if port.type == "key":
            bare = el.attrib.get(BARE_ATTR, "").split(";")
            return raw.strip()[1:-1] if is_ref and name in bare else raw
        if is_ref:
            if nt.kind in STATIC_KINDS:
                raise self.err(f"port {name}=\"{raw}\" reads the blackboard; bt_grasp needs a "
                               "literal here so the budget is static and can be bounded", el)
            return raw
        try:
            if port.type == "int":
                return int(raw)
            if port.type == "float":
                return float(raw)
            if port.type == "bool":
                low = raw.strip().lower()
                if low not in ("true", "false", "1", "0"):
                    raise ValueError(raw)
                return low in ("true", "1")
        except ValueError:
            raise self.err(f"port {name}=\"{raw}\" of <{el.tag}> must be "
                           f"{'an integer' if port.type == 'int' else 'a number' if port.type == 'float' else 'true or false'}",
                           el) from None
        if port.type == "list":
            return [s for s in raw.split(";") if s]
        if port.type == "any":
            try:
                return json.loads(raw)
            except ValueError:
                return raw
        return raw

    def params_for(self, nt: NodeType, el: El, values: dict[str, Any]) -> dict[str, Any]:
        params = {name: port.default for name, port in nt.ports.items()}
        params.update(values)
        for name, port in nt.ports.items():
            if port.required and params.get(name) is None:
                raise self.err(f"<{el.tag}> is missing port '{name}'", el)
        return params

    def check_attrs(self, el: El) -> dict[str, str]:
        """Attributes that are ports (name, ID, our metadata and _description removed)."""
        out = {}
        for key, value in el.attrib.items():
            if key in SCRIPT_ATTRS:
                raise self.err(f"<{el.tag}> uses the BT.CPP script attribute {key}: pre/post-"
                               "conditions are not supported by the importer; rewrite it with "
                               "condition nodes", el)
            if key in ("name", "ID") or key.startswith("_"):
                continue  # BT.CPP never reads "_..." attributes as ports; ours are read by name
            out[key] = value
        return out

    def _int(self, raw: str | None, name: str, el: El) -> int:
        if raw is None:
            raise self.err(f"<{el.tag}> is missing port '{name}'", el)
        if BRACE_REF.match(raw.strip()):
            raise self.err(f"port {name}=\"{raw}\" reads the blackboard; bt_grasp needs a literal "
                           "here so the bound is static", el)
        try:
            return int(raw)
        except ValueError:
            raise self.err(f"port {name}=\"{raw}\" of <{el.tag}> must be an integer", el) from None

    def outcomes_of(self, tag: str, el: El, model: El | None) -> list[str]:
        raw = None
        if tag in self.outcome_overrides:
            out = self.outcome_overrides[tag]
        else:
            raw = el.attrib.get(OUTCOMES_ATTR) or (model.attrib.get(OUTCOMES_ATTR) if model is not None else None)
            out = [s.strip() for s in raw.split(";") if s.strip()] if raw else list(DEFAULT_OUTCOMES)
        bad = [o for o in out if o not in OUTCOME_STATUS]
        if bad or not out:
            raise self.err(f"outcomes of <{tag}> must be among success, failure, running; got "
                           f"{';'.join(out) or 'nothing'}", el)
        return out
