"""BT.CPP v4 elements -> bt_grasp NodeSpecs: controls, decorators, Switch, opaque leaves, SubTrees.

Nodes keep their BT.CPP semantics (see bt_grasp.interop.btcpp_import); SubTrees are inlined with
BT.CPP's port remapping.
"""

from __future__ import annotations

import re
from typing import Any

from bt_grasp.errors import did_you_mean
from bt_grasp.interop.btcpp_document import BRACE_REF, STATIC_KINDS, DocumentReader, RemappedLiteral
from bt_grasp.interop.common import (
    BUDGET_DECORATOR,
    NAV2_CONTROLS,
    REFILL_ATTR,
    SCOPE_ATTR,
    SECONDS_ATTR,
    SEQ_SEL,
    SIMPLE_DECORATORS,
)
from bt_grasp.interop.xml_read import El
from bt_grasp.spec.model import NodeSpec, Pos

_TAG_TO_SEQ_SEL = {tag: key for key, tag in SEQ_SEL.items()}
_TAG_TO_DECORATOR = {tag: t for t, tag in SIMPLE_DECORATORS.items()}
_TAG_TO_NAV2 = {tag: t for t, tag in NAV2_CONTROLS.items()}
_SWITCH = re.compile(r"^Switch(\d+)$")
EXPLICIT = {"Action": "action", "Condition": "condition", "Decorator": "decorator",
            "Control": "control"}
# Nav2 / BT.CPP condition nodes commonly met without a TreeNodesModel entry.
KNOWN_CONDITIONS = frozenset({
    "GoalUpdated", "GoalReached", "InitialPoseReceived", "IsStuck", "TransformAvailable",
    "DistanceTraveled", "TimeExpired", "IsBatteryLow", "IsBatteryCharging", "IsPathValid",
    "PathExpiringTimer", "AreErrorCodesPresent", "WouldAControllerRecoveryHelp",
    "WouldAPlannerRecoveryHelp", "WouldASmootherRecoveryHelp", "GloballyUpdatedGoal",
    "IsGoalNearby", "ScriptCondition", "WasStopped"})


class ElementImporter(DocumentReader):
    """Converts one element (and its children) at a time, in document order."""

    def node(self, el: El, ns, prefix: str) -> NodeSpec:
        tag = el.tag
        explicit = None
        if tag in EXPLICIT:
            explicit = EXPLICIT[tag]
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
        if nt is not None and nt.kind not in STATIC_KINDS and nt.name not in (
                "opaque_action", "opaque_condition"):
            return make(tag, {})
        return self.opaque(el, tag, explicit, attrs, ns, prefix, pos)

    def switch(self, el: El, n: int, attrs: dict[str, str], ns, prefix: str, pos: Pos) -> NodeSpec:
        if len(el.children) != n + 1:
            raise self.err(f"<{el.tag}> must have {n + 1} children ({n} cases and the default), "
                           f"has {len(el.children)}", el)
        variable = attrs.pop("variable", None)
        if variable is None or not BRACE_REF.match(variable.strip()):
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
        kind = explicit or (EXPLICIT.get(model.tag) if model is not None else None)
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
                m = BRACE_REF.match(value.strip())
                if not m:
                    return RemappedLiteral(value)
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
