"""Mobile-manipulation tools as leaves: nav_to, walk_around, show_object_by_category,
show_receptacles, gaze_at, pick, place_on, open, close, ask, listen, finish.

They talk to the world only through ctx.driver, ctx.perceiver and ctx.services, like every other
leaf, and use of the driver only what bt_grasp/drivers/base.py and bt_grasp/drivers/capabilities.py
declare (Driver, MobileBase, Head, Articulated, AtReceptacle, UserChannel, ReceptacleAnnotator): a
driver lacking a protocol gets the leaf's documented fallback, never an AttributeError.

The leaves are in mobile_survey.py (show_object_by_category, walk_around, show_receptacles),
mobile_motions.py (nav_to, gaze_at, pick, place_on, open, close) and mobile_dialogue.py (ask,
listen), sharing the markers of mobile_marks.py; finish and the list of them all are here.
"""

from __future__ import annotations

from bt_grasp.nodes.base import Leaf
from bt_grasp.nodes.declare import leaf_type
from bt_grasp.nodes.mobile_dialogue import Ask, Listen
from bt_grasp.nodes.mobile_motions import Close, GazeAt, NavTo, Open, Pick, PlaceOn
from bt_grasp.nodes.mobile_survey import ShowObjectByCategory, ShowReceptacles, WalkAround
from bt_grasp.nodes.terminal import Finalize
from bt_grasp.registry import Port


class Finish(Finalize):
    NODE_TYPE = leaf_type("finish", "terminal", {
        "reason": Port("reason", "str", default="done"),
    }, doc="End the episode with FINALIZE (the mobile agent's finish tool).")


MOBILE_LEAVES: tuple[type[Leaf], ...] = (NavTo, WalkAround, ShowObjectByCategory, ShowReceptacles, GazeAt, Pick,
                                         PlaceOn, Open, Close, Ask, Listen, Finish)
