"""Shared pieces of the BT.CPP exporter and importer: the registry, the spec API, vocabulary.

Both directions must agree on the element names and on the `_bt_grasp_*` attributes, so the
table lives here once.
"""

from __future__ import annotations

from bt_grasp.default_registry import default_registry
from bt_grasp.interop.nodes import register_interop_types
from bt_grasp.registry import Registry

# The importer reads bt_grasp metadata from these attributes. BT.CPP keeps attributes starting with
# "_" that are not reserved as "other attributes" and never reads them as ports, but its XSD refuses
# them, so the exporter writes the metadata in a <?bt_grasp?> instruction instead (btcpp_meta),
# which the importer turns back into these attributes; older files carry them directly.
ATTR_PREFIX = "_bt_grasp_"
REFILL_ATTR = ATTR_PREFIX + "refill"          # on RetryUntilSuccessful: "false" = bt_grasp retry
SCOPE_ATTR = ATTR_PREFIX + "scope"            # bt_grasp retry scope
SECONDS_ATTR = ATTR_PREFIX + "seconds"        # Timeout whose seconds are not whole milliseconds
OUTCOMES_ATTR = ATTR_PREFIX + "outcomes"      # opaque leaves: declared outcomes, ";"-separated
# Output (key) ports are always written braced, as BT.CPP wants; this lists the ones the tree file
# wrote bare ("grasp.outcome"), so the round trip gives back exactly the same values.
BARE_ATTR = ATTR_PREFIX + "bare"
GOAL_ATTR = ATTR_PREFIX + "goal"              # BehaviorTree: the default goal as JSON
NODES_ATTR = ATTR_PREFIX + "nodes"            # BehaviorTree: user node classes as JSON
# BehaviorTree: written by bt_grasp's exporter, so the tree's Decisions are already the author's
# (the importer then never wraps it in a SUCCESS/FAILURE -> Decision ending).
EXPORTED_ATTR = ATTR_PREFIX + "exported"
BUDGET_ATTRS = {"actions": ATTR_PREFIX + "actions",
                "perception_streak": ATTR_PREFIX + "perception_streak",
                "max_ticks": ATTR_PREFIX + "max_ticks"}

BUDGET_DECORATOR = "BtGraspActionBudget"      # our `budget` decorator, declared in TreeNodesModel

# bt_grasp type (+ memory flag for sequence/selector) <-> BT.CPP element. A sequence / selector
# with memory: false is the reactive one: both export alike and import as reactive_* (the last
# entry of a tag wins on import).
SEQ_SEL = {("sequence", True): "Sequence", ("sequence", False): "ReactiveSequence",
           ("selector", True): "Fallback", ("selector", False): "ReactiveFallback",
           ("reactive_sequence", True): "ReactiveSequence",
           ("reactive_selector", True): "ReactiveFallback"}
SIMPLE_DECORATORS = {"inverter": "Inverter", "force_success": "ForceSuccess",
                     "force_failure": "ForceFailure"}
NAV2_CONTROLS = {"recovery_node": "RecoveryNode", "pipeline_sequence": "PipelineSequence",
                 "round_robin": "RoundRobin"}

# Pre/post-condition scripts of BT.CPP v4: they change a node's semantics in ways bt_grasp does
# not model, so the importer refuses them instead of silently dropping them.
SCRIPT_ATTRS = ("_skipIf", "_failureIf", "_successIf", "_while", "_onHalted", "_onFailure",
                "_onSuccess", "_post")


def interop_registry(registry: Registry | None = None) -> Registry:
    """The registry to validate against, with the BT.CPP / Nav2 types present."""
    reg = registry or default_registry()
    register_interop_types(reg)
    return reg


def fmt_value(value: object) -> str:
    """A port value as a BT.CPP attribute string (BT.CPP ports are strings; lists use ';')."""
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ";".join(fmt_value(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    if isinstance(value, float) and "e" in repr(value):
        # xs:decimal (BT.CPP's XSD for double ports) has no exponent: 1e-05 -> "0.00001".
        import numpy as np

        return np.format_float_positional(value, trim="-")
    return str(value)
