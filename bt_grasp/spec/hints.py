"""What a user most likely meant by a node type or port the registry does not know.

Spelling alone points the wrong way: `locate` is spelt most like `locate_any` (a baseline),
`pick_up` most like `pick` (a Stretch node) and `grasp` written beside `retry` looks like an
unknown port. So node types are ranked by family (the core arm nodes before the baselines, the
Stretch's mobile nodes and the BT.CPP import types), common verbs lead to the node that does
that, and a node name where a port was expected says where the node belongs.
"""

from __future__ import annotations

import re

from bt_grasp.errors import likely_meant
from bt_grasp.registry import NodeType, Registry

# Words users write for what a core node does (BT.CPP's names too); a hint, never an alias.
VERBS = {
    "pick": "grasp", "pickup": "grasp", "grab": "grasp", "take": "grasp", "hold": "grasp",
    "find": "locate_object", "detect": "locate_object", "search": "locate_object", "locate": "locate_object",
    "look": "survey_scene", "perceive": "survey_scene", "observe": "survey_scene", "scan": "survey_scene",
    "release": "open_gripper", "drop": "place", "put": "place", "raise": "lift",
    "fallback": "selector", "retryuntilsuccessful": "retry", "check": "evaluate_grasp",
}
# A family's label in a hint, by the module of the node's class; unlisted: the core (no label).
FAMILIES = (("bt_grasp.nodes.bench_nodes", "baseline"), ("bt_grasp.nodes.mobile", "Stretch node"),
            ("bt_grasp.interop", "BT.CPP import type"))


def family(nt: NodeType) -> str:
    """'' for a core node, else what it is for (the label a hint gives it)."""
    module = getattr(nt.factory, "__module__", "") or ""
    return next((label for prefix, label in FAMILIES if module.startswith(prefix)), "")


def node_type_hint(word: str, registry: Registry, extra: tuple[str, ...] = ()) -> str:
    """' (did you mean locate_object, or the baseline locate_any?)', or '' when nothing is near."""
    names = [*registry.names(), *extra]
    tokens = [t for t in re.split(r"[^a-z]+", word.casefold()) if t]
    verbs = [VERBS[t] for t in (["".join(tokens)] + tokens) if t in VERBS]
    spelt = likely_meant(word, names)
    same_case = [n for n in spelt if n.casefold() == word.casefold()]

    def rank(name: str) -> int:
        nt = registry.get(name)
        return 0 if nt is None or not family(nt) else 1

    ranked = [n for n in dict.fromkeys(same_case + sorted(dict.fromkeys(verbs + spelt), key=rank)) if n in names]
    if not ranked:
        return ""
    # A second name only where the ranking overrode spelling: the name spelling alone would give.
    ranked = ranked[:1] + [n for n in spelt[:1] if n != ranked[0]]
    text = ranked[0]
    for name in ranked[1:]:
        nt = registry.get(name)
        label = family(nt) if nt is not None else ""
        text += f", or the {label} {name}" if label else f" or {name}"
    return f" (did you mean {text}?)"


def node_as_port_hint(nt: NodeType, key: str, registry: Registry) -> str | None:
    """When `key`, written among `nt`'s fields, is a node type: where that node belongs."""
    if key not in registry:
        return None
    if nt.arity == "one":
        return (f"'{key}' is a node, not a port of {nt.name}: a decorator's node goes under 'child:' "
                f"({nt.name}: {{child: {{{key}: {{...}}}}}})")
    if nt.arity == "many":
        return (f"'{key}' is a node, not a port of {nt.name}: list it under 'children:' "
                f"({nt.name}: {{children: [{key}: {{...}}]}})")
    if nt.arity == "cases":
        return f"'{key}' is a node, not a port of {nt.name}: put it under 'cases:' or 'default:'"
    return (f"'{key}' is a node, not a port of {nt.name}: a leaf holds no nodes; put both in a "
            "sequence's 'children:'")
