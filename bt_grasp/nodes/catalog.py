"""The built-in leaves, in the order the node reference lists them; each class carries its type."""

from __future__ import annotations

from bt_grasp.nodes.base import Leaf
from bt_grasp.nodes.bench_nodes import GoalTaken, LocateAny
from bt_grasp.nodes.conditions import LabelIs
from bt_grasp.nodes.evidence import CheckHeld, VerifyDelivery
from bt_grasp.nodes.mobile import MOBILE_LEAVES
from bt_grasp.nodes.mobile_target import TARGET_LEAVES
from bt_grasp.nodes.perception import LocateObject, SurveyScene
from bt_grasp.nodes.primitives import Grasp, Lift, OpenGripper, Place, Push
from bt_grasp.nodes.search import PickHider
from bt_grasp.nodes.terminal import Finalize, WaitClarify
from bt_grasp.nodes.watchdog import EvaluateGrasp
from bt_grasp.registry import NodeType

_MOBILE_ORDER = ("nav_to", "walk_around", "show_object_by_category", "select_target", "check_target",
                 "show_receptacles", "gaze_at", "pick", "place_on", "open", "close", "ask", "listen",
                 "finish")
_MOBILE = {cls.TYPE: cls for cls in MOBILE_LEAVES + TARGET_LEAVES}

LEAVES: tuple[type[Leaf], ...] = (
    SurveyScene, LocateObject, Grasp, Push, Lift, Place, OpenGripper, EvaluateGrasp, LabelIs,
    Finalize, WaitClarify, LocateAny, PickHider, CheckHeld, VerifyDelivery, GoalTaken,
    *(_MOBILE[name] for name in _MOBILE_ORDER))
LEAF_CLASSES: dict[str, type[Leaf]] = {cls.TYPE: cls for cls in LEAVES}


def leaf_types() -> list[NodeType]:
    """Every built-in leaf's declared node type."""
    return [cls.NODE_TYPE for cls in LEAVES if cls.NODE_TYPE is not None]
