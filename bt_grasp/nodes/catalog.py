"""Which class implements each built-in leaf type."""

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

LEAF_CLASSES: dict[str, type[Leaf]] = {cls.TYPE: cls for cls in (
    SurveyScene, LocateObject, Grasp, Push, Lift, Place, OpenGripper, EvaluateGrasp, LabelIs,
    Finalize, WaitClarify, LocateAny, GoalTaken, PickHider, CheckHeld, VerifyDelivery)}
LEAF_CLASSES.update({cls.TYPE: cls for cls in MOBILE_LEAVES + TARGET_LEAVES})  # mobile manipulation tools
