"""BehaviorTree.CPP v4 XML -> a bt_grasp tree file, keeping the C++ nodes' own semantics.

An imported tree should be verified as what it *is*, so nodes are not "upgraded" to bt_grasp
semantics: RetryUntilSuccessful becomes `btcpp_retry` and Nav2's RecoveryNode `recovery_node`
(both refill their counts when halted), PipelineSequence and RoundRobin keep their Nav2 rules.
Only a RetryUntilSuccessful marked `_bt_grasp_refill="false"` (written by our exporter) becomes a
bt_grasp `retry` again. Nodes bt_grasp cannot run (Nav2 actions, user plugins) become opaque
leaves whose declared outcomes the verifier explores. SubTrees are inlined with BT.CPP's port
remapping, so the result is one self-contained tree file.

Elements keep their line numbers (bt_grasp.interop.xml_read) so every error names file:line:col.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from bt_grasp.errors import UserError, did_you_mean
from bt_grasp.interop.btcpp_meta import apply_metadata, strip_key_ports
from bt_grasp.interop.common import (
    ATTR_PREFIX,
    BARE_ATTR,
    BUDGET_ATTRS,
    BUDGET_DECORATOR,
    EXPORTED_ATTR,
    GOAL_ATTR,
    NAV2_CONTROLS,
    NODES_ATTR,
    OUTCOMES_ATTR,
    REFILL_ATTR,
    SCOPE_ATTR,
    SCRIPT_ATTRS,
    SECONDS_ATTR,
    SEQ_SEL,
    SIMPLE_DECORATORS,
    interop_registry,
)
from bt_grasp.interop.nodes import DEFAULT_OUTCOMES, OUTCOME_STATUS
from bt_grasp.interop.xml_read import El, parse_xml, xml_pos
from bt_grasp.registry import NodeType, Registry
from bt_grasp.spec.model import Budgets, NodeSpec, Pos, TreeSpec

SUPPORTED_FORMAT = "4"
_TAG_TO_SEQ_SEL = {tag: key for key, tag in SEQ_SEL.items()}
_TAG_TO_DECORATOR = {tag: t for t, tag in SIMPLE_DECORATORS.items()}
_TAG_TO_NAV2 = {tag: t for t, tag in NAV2_CONTROLS.items()}
_SWITCH = re.compile(r"^Switch(\d+)$")
_EXPLICIT = {"Action": "action", "Condition": "condition", "Decorator": "decorator",
             "Control": "control"}
# Nav2 / BT.CPP condition nodes commonly met without a TreeNodesModel entry.
KNOWN_CONDITIONS = frozenset({
    "GoalUpdated", "GoalReached", "InitialPoseReceived", "IsStuck", "TransformAvailable",
    "DistanceTraveled", "TimeExpired", "IsBatteryLow", "IsBatteryCharging", "IsPathValid",
    "PathExpiringTimer", "AreErrorCodesPresent", "WouldAControllerRecoveryHelp",
    "WouldAPlannerRecoveryHelp", "WouldASmootherRecoveryHelp", "GloballyUpdatedGoal",
    "IsGoalNearby", "ScriptCondition", "WasStopped"})
_BRACE_REF = re.compile(r"^\{(.*)\}$")
_BAD_ID_CHARS = re.compile(r"[^\w\-/]")
_STATIC_KINDS = ("composite", "decorator")


# -- the importer ------------------------------------------------------------------------------

class _Literal(str):
    """A SubTree port remapped to a literal value instead of a blackboard entry."""


class _Importer:
    def __init__(self, root: El, file: str, registry: Registry,
                 outcomes: dict[str, list[str]] | None) -> None:
        self.root = root
        self.file = file
        self.reg = registry
        self.outcome_overrides = {k: list(v) for k, v in (outcomes or {}).items()}
        self.trees = {}
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
        m = _BRACE_REF.match(raw.strip())
        if not m:
            return raw
        key = m.group(1).strip()
        if key == "=":
            key = port
        if key.startswith("@"):
            return "{" + key[1:] + "}"
        mapped = ns(key)
        return str(mapped) if isinstance(mapped, _Literal) else "{" + mapped + "}"

    def convert(self, nt: NodeType, name: str, raw: str, el: El) -> Any:
        port = nt.ports[name]
        is_ref = _BRACE_REF.match(raw.strip()) is not None
        if port.type == "key":
            bare = el.attrib.get(BARE_ATTR, "").split(";")
            return raw.strip()[1:-1] if is_ref and name in bare else raw
        if is_ref:
            if nt.kind in _STATIC_KINDS:
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

    # -- nodes -----------------------------------------------------------------------------
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

    def node(self, el: El, ns, prefix: str) -> NodeSpec:
        tag = el.tag
        explicit = None
        if tag in _EXPLICIT:
            explicit = _EXPLICIT[tag]
            tag = el.attrib.get("ID") or ""
            if not tag:
                raise self.err(f"<{el.tag}> needs an ID attribute", el)
        if tag == "SubTree":
            return self.subtree(el, ns, prefix)
        attrs = {k: self.rename(v, k, ns) for k, v in self.check_attrs(el).items()}
        pos = Pos(self.file, el.line, el.col)
        kids = el.children

        def make(node_type: str, values: dict[str, Any], children: list[El] | None = None,
                 arity: str | None = None) -> NodeSpec:
            nt = self.reg.require(node_type)
            known = set(values)
            extra = [k for k in attrs if k not in known and k not in nt.ports]
            if extra:
                raise self.err(f"unknown attribute '{extra[0]}' on <{el.tag}>"
                               f"{did_you_mean(extra[0], list(nt.ports) + list(known))}", el)
            conv = dict(values)
            for k, v in attrs.items():
                if k in nt.ports and k not in known:
                    conv[k] = self.convert(nt, k, v, el)
            spec = NodeSpec(type=node_type, id=self.new_id(el.attrib.get("name"), node_type, prefix),
                            params=self.params_for(nt, el, conv), pos=pos)
            want = arity or nt.arity
            subs = kids if children is None else children
            if want == "none" and subs:
                raise self.err(f"<{el.tag}> must not have children", el)
            if want == "one" and len(subs) != 1:
                raise self.err(f"<{el.tag}> must have exactly one child, has {len(subs)}", el)
            if want == "many" and not subs:
                raise self.err(f"<{el.tag}> needs at least one child", el)
            spec.children = [self.node(k, ns, prefix) for k in subs]
            return spec

        def take(*names: str) -> None:
            for n in names:
                attrs.pop(n, None)

        if tag in _TAG_TO_SEQ_SEL:
            t, memory = _TAG_TO_SEQ_SEL[tag]
            return make(t, {"memory": memory} if t in ("sequence", "selector") else {})
        if tag == "Parallel":
            n = len(kids)
            sc = self._int(attrs.pop("success_count", "-1"), "success_count", el)
            fc = self._int(attrs.pop("failure_count", "1"), "failure_count", el)
            if fc == 1 and sc == 1:  # checked first: with one child both policies read "1"
                return make("parallel", {"policy": "success_on_one"})
            if fc == 1 and (sc < 0 or sc == n):
                return make("parallel", {"policy": "success_on_all"})
            return make("btcpp_parallel", {"success_count": sc, "failure_count": fc})
        m = _SWITCH.match(tag)
        if m:
            return self.switch(el, int(m.group(1)), attrs, ns, prefix, pos)
        if tag == "RetryUntilSuccessful":
            n = self._int(attrs.pop("num_attempts", None), "num_attempts", el)
            if el.attrib.get(REFILL_ATTR, "").lower() == "false":
                if n < 1:
                    raise self.err("a bt_grasp retry needs num_attempts >= 1", el)
                return make("retry", {"attempts": n, "scope": el.attrib.get(SCOPE_ATTR)})
            return make("btcpp_retry", {"num_attempts": n})
        if tag == "Repeat":
            n = self._int(attrs.pop("num_cycles", None), "num_cycles", el)
            return make("repeat", {"times": None if n < 0 else n})
        if tag == "Timeout":
            msec = self._int(attrs.pop("msec", None), "msec", el)
            seconds = float(el.attrib[SECONDS_ATTR]) if SECONDS_ATTR in el.attrib else msec / 1000.0
            return make("timeout", {"seconds": seconds})
        if tag in _TAG_TO_DECORATOR:
            return make(_TAG_TO_DECORATOR[tag], {})
        if tag == BUDGET_DECORATOR:
            return make("budget", {})
        if tag in _TAG_TO_NAV2:
            t = _TAG_TO_NAV2[tag]
            if t == "recovery_node" and len(kids) != 2:
                raise self.err(f"<RecoveryNode> must have exactly 2 children (action, recovery), "
                               f"has {len(kids)}", el)
            if t == "round_robin":
                take("wrap_around")
            return make(t, {})
        if tag in ("AlwaysSuccess", "AlwaysFailure"):
            return make("opaque_action", {"btcpp_id": tag, "ports": None,
                                          "outcomes": ["success" if tag == "AlwaysSuccess" else "failure"]},
                        arity="none")
        nt = self.reg.get(tag)
        if nt is not None and nt.kind not in _STATIC_KINDS and nt.name not in (
                "opaque_action", "opaque_condition"):
            return make(tag, {})
        return self.opaque(el, tag, explicit, attrs, ns, prefix, pos)

    def _int(self, raw: str | None, name: str, el: El) -> int:
        if raw is None:
            raise self.err(f"<{el.tag}> is missing port '{name}'", el)
        if _BRACE_REF.match(raw.strip()):
            raise self.err(f"port {name}=\"{raw}\" reads the blackboard; bt_grasp needs a literal "
                           "here so the bound is static", el)
        try:
            return int(raw)
        except ValueError:
            raise self.err(f"port {name}=\"{raw}\" of <{el.tag}> must be an integer", el) from None

    def switch(self, el: El, n: int, attrs: dict[str, str], ns, prefix: str, pos: Pos) -> NodeSpec:
        if len(el.children) != n + 1:
            raise self.err(f"<{el.tag}> must have {n + 1} children ({n} cases and the default), "
                           f"has {len(el.children)}", el)
        variable = attrs.pop("variable", None)
        if variable is None or not _BRACE_REF.match(variable.strip()):
            raise self.err(f"<{el.tag}> variable must be a blackboard entry like \"{{grasp.label}}\", "
                           f"got {variable!r}", el)
        labels = []
        for i in range(1, n + 1):
            label = attrs.pop(f"case_{i}", None)
            if label is None:
                raise self.err(f"<{el.tag}> is missing case_{i}", el)
            labels.append(label)
        if attrs:
            raise self.err(f"unknown attribute '{next(iter(attrs))}' on <{el.tag}>", el)
        spec = NodeSpec(type="switch", id=self.new_id(el.attrib.get("name"), "switch", prefix),
                        params={"on": variable}, pos=pos)
        for label, kid in zip(labels, el.children[:n], strict=True):
            if label in spec.cases:
                raise self.err(f"<{el.tag}> has case '{label}' twice", el)
            spec.cases[label] = self.node(kid, ns, prefix)
        last = el.children[n]
        is_fail = (last.tag == "AlwaysFailure" or (last.tag == "Action" and last.attrib.get("ID") == "AlwaysFailure"))
        if not is_fail:
            spec.default = self.node(last, ns, prefix)
        return spec

    def opaque(self, el: El, tag: str, explicit: str | None, attrs: dict[str, str], ns, prefix: str,
               pos: Pos) -> NodeSpec:
        model = self.model.get(tag)
        kind = explicit or (_EXPLICIT.get(model.tag) if model is not None else None)
        if el.children:
            if len(el.children) == 1 and kind in (None, "decorator"):
                node_type = "opaque_decorator"
            else:
                raise self.err(f"unsupported control node <{tag}>: bt_grasp imports Sequence, "
                               "Fallback, ReactiveSequence, ReactiveFallback, Parallel, SwitchN, "
                               "RecoveryNode, PipelineSequence and RoundRobin; unknown nodes are "
                               "only imported as leaves or one-child decorators", el)
        elif kind == "condition" or (kind is None and (tag in KNOWN_CONDITIONS)):
            node_type = "opaque_condition"
        elif kind in (None, "action"):
            node_type = "opaque_action"
        else:
            raise self.err(f"<{tag}> is declared as a {kind} but has no children", el)
        values: dict[str, Any] = {"btcpp_id": tag, "ports": dict(attrs) or None}
        if node_type != "opaque_decorator":
            values["outcomes"] = self.outcomes_of(tag, el, model)
        nt = self.reg.require(node_type)
        spec = NodeSpec(type=node_type, id=self.new_id(el.attrib.get("name") or tag, node_type, prefix),
                        params=self.params_for(nt, el, values), pos=pos)
        spec.children = [self.node(k, ns, prefix) for k in el.children]
        return spec

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

    def subtree(self, el: El, ns, prefix: str) -> NodeSpec:
        sub_id = el.attrib.get("ID")
        if not sub_id:
            raise self.err("<SubTree> needs an ID attribute naming a <BehaviorTree>", el)
        if sub_id not in self.trees:
            raise self.err(f"missing SubTree '{sub_id}': no <BehaviorTree ID=\"{sub_id}\"> in this "
                           f"document{did_you_mean(sub_id, self.trees)}", el)
        if sub_id in self.stack:
            raise self.err(f"SubTree cycle: {' -> '.join(self.stack + [sub_id])}", el)
        if el.children:
            raise self.err("<SubTree> must not have children", el)
        inst = self.new_id(el.attrib.get("name") or sub_id, "subtree", prefix)
        autoremap = el.attrib.get("_autoremap", "false").strip().lower() in ("true", "1")
        remap = {k: v for k, v in self.check_attrs(el).items()}

        def child_ns(key: str):
            if key in remap:
                value = remap[key]
                m = _BRACE_REF.match(value.strip())
                if not m:
                    return _Literal(value)
                inner = m.group(1).strip()
                if inner == "=":
                    inner = key
                if inner.startswith("@"):
                    return inner[1:]
                return ns(inner)
            if autoremap:
                return ns(key)
            return f"{inst}/{key}"

        self.stack.append(sub_id)
        try:
            return self.node(self.trees[sub_id].children[0], child_ns, f"{inst}/")
        finally:
            self.stack.pop()


def _copy_registry(reg: Registry) -> Registry:
    """A copy to register user node classes into, so they do not leak into the shared default."""
    new = Registry()
    for nt in reg:
        new.add(nt)
    return new


def _has_decision(root: NodeSpec) -> bool:
    return any(n.type in ("finalize", "wait_clarify") for n in root.walk())


def _wrap_with_decisions(root: NodeSpec, tree: str, taken: set[str]) -> NodeSpec:
    """Give a BT.CPP tree (which has no Decisions) bt_grasp's ending: its status decides."""

    def fresh(name: str) -> str:
        candidate, k = name, 1
        while candidate in taken:
            k += 1
            candidate = f"{name}_{k}"
        taken.add(candidate)
        return candidate

    pos = root.pos
    done = NodeSpec(type="finalize", id=fresh("btcpp_succeeded"),
                    params={"reason": f"BT.CPP tree {tree} returned SUCCESS"}, pos=pos)
    run = NodeSpec(type="sequence", id=fresh("btcpp_run"), params={"memory": True},
                   children=[root, done], pos=pos)
    failed = NodeSpec(type="wait_clarify", id=fresh("btcpp_failed"),
                      params={"reason": f"BT.CPP tree {tree} returned FAILURE"}, pos=pos)
    return NodeSpec(type="selector", id=fresh("btcpp_episode"), params={"memory": True},
                    children=[run, failed], pos=pos)


def import_spec(xml_path: str | Path, registry: Registry | None = None,
                outcomes: dict[str, list[str]] | None = None, decisions: bool | None = None,
                text: str | None = None) -> TreeSpec:
    """Parse a BT.CPP v4 document into a TreeSpec, checked like a tree file.

    `outcomes` overrides the declared outcomes of opaque nodes by BT.CPP ID, e.g.
    {"FollowPath": ["success", "failure", "running"]}. With `decisions` true, a tree that has no
    finalize / wait_clarify leaf is wrapped so that SUCCESS finalizes and FAILURE waits for
    clarification — bt_grasp episodes end in a Decision, BT.CPP trees end in a status. The
    default (None) wraps foreign trees only: a document written by our exporter is returned as
    its author wrote it, so export -> import is the identity.
    """
    file = str(xml_path)
    data: str | bytes
    if text is None:
        try:
            data = Path(xml_path).read_bytes()
        except FileNotFoundError:
            raise UserError("no such file", file) from None
        except IsADirectoryError:
            raise UserError("is a directory, not a BT.CPP XML file", file) from None
        except OSError as exc:
            raise UserError(f"cannot read: {exc.strerror}", file) from None
    else:
        data = text
    reg = interop_registry(registry)
    imp = _Importer(parse_xml(data, file), file, reg, outcomes)
    meta_text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    apply_metadata(imp.root, meta_text, file)  # <?bt_grasp ...?> -> the _bt_grasp_* attributes read below
    bt, name = imp.document()
    user_nodes: list[str] = []
    if NODES_ATTR in bt.attrib:
        try:
            user_nodes = [str(ref) for ref in json.loads(bt.attrib[NODES_ATTR])]
        except (ValueError, TypeError) as exc:
            raise imp.err(f"bad JSON in {NODES_ATTR}: {exc}", bt) from None
        if user_nodes:  # their leaves come back typed, as the tree file had them
            imp.reg = reg = _copy_registry(reg)
            for ref in user_nodes:
                try:
                    reg.load_user_class(ref)
                except UserError as exc:
                    raise imp.err(exc.message, bt) from None
    strip_key_ports(imp.root, reg, file)  # derived entries: checked, then recomputed by the leaves
    imp.stack.append(name)
    root = imp.node(bt.children[0], lambda key: key, "")
    if decisions is None:
        decisions = bt.attrib.get(EXPORTED_ATTR, "").lower() != "true"
    if decisions and not _has_decision(root):
        root = _wrap_with_decisions(root, name, imp.taken)
    budgets = Budgets()
    for key, attr in BUDGET_ATTRS.items():
        if attr in bt.attrib:
            try:
                setattr(budgets, key, int(bt.attrib[attr]))
            except ValueError:
                raise imp.err(f"{attr}=\"{bt.attrib[attr]}\" must be an integer", bt) from None
    goal: dict[str, Any] = {}
    try:
        if GOAL_ATTR in bt.attrib:
            goal = json.loads(bt.attrib[GOAL_ATTR])
    except ValueError as exc:
        raise imp.err(f"bad JSON in a {ATTR_PREFIX}* attribute: {exc}", bt) from None
    spec = TreeSpec(name=name, description=bt.attrib.get("_description", ""), goal=goal,
                    budgets=budgets, root=root, file=file, user_nodes=user_nodes, registry=reg)
    _check_as_tree_file(spec, file)
    return spec


def _check_as_tree_file(spec: TreeSpec, file: str) -> str:
    """Dump the spec and load the text back through the spec loader, so an imported tree obeys
    every rule a tree file does (port ranges, finite numbers, limits). Returns the text; an error
    points at the XML element the offending node came from."""
    from bt_grasp.spec.dump import dump_tree
    from bt_grasp.spec.loader import load_tree_text

    text = dump_tree(spec)
    try:
        load_tree_text(text, "<imported>", spec.registry, base_dir=Path(file).parent)
    except UserError as exc:
        at = xml_pos(text, spec.root, exc.line) if exc.file == "<imported>" else None
        if at is None:
            raise UserError(f"the imported tree does not validate: {exc}", file) from None
        raise UserError(exc.message, file, at.line, at.col) from None
    return text


def import_btcpp(xml_path: str | Path, registry: Registry | None = None,
                 outcomes: dict[str, list[str]] | None = None, decisions: bool | None = None) -> str:
    """BT.CPP v4 XML file -> YAML text of an equivalent bt_grasp tree (the spec's dump format).

    The text is loaded back through the spec loader before it is returned, so what you get is a
    valid tree file.
    """
    from bt_grasp.spec.dump import dump_tree

    return dump_tree(import_spec(xml_path, registry, outcomes, decisions))
