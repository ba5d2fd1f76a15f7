"""A node of your own: `in_reach`, is the located object within the arm's reach?

Put this file beside your tree and list the class in the tree (`nodes: ["my_nodes:InReach"]`):
bt-grasp imports a module from the tree's own folder without PYTHONPATH.
"""

import numpy as np

from bt_grasp.nodes.base import Leaf, LeafResult
from bt_grasp.registry import NodeType, Port


class InReach(Leaf):
    """in_reach when the located object's centre lies within `max_reach` metres of the robot base
    (horizontally), out_of_reach when farther, unknown when nothing was located."""

    NODE_TYPE = NodeType("in_reach", "action", {
        "target": Port("target", "any", default="{target}", doc="a located object (locate_object's result)"),
        "max_reach": Port("max_reach", "float", default=0.8, minimum=0.0, doc="metres from the base"),
        "outcome": Port("outcome", "key", default="in_reach.outcome", doc="in_reach | out_of_reach | unknown"),
    }, outcomes=("in_reach", "out_of_reach", "unknown"), outcome_port="outcome",
        doc="Is the located object within reach of the base?")
    # The outcomes whose status is SUCCESS; the others are FAILURE (a selector then tries its next child).
    SUCCESS_OUTCOMES = frozenset({"in_reach"})

    def execute(self) -> LeafResult:
        """Called when the tree ticks the node on a robot; the verifier instead picks each outcome."""
        points = getattr(self.port("target"), "points_base", None)
        if points is None or len(points) == 0:
            return self.result("unknown")
        x, y = np.median(np.asarray(points), axis=0)[:2]
        distance = float(np.hypot(x, y))
        outcome = "in_reach" if distance <= float(self.port("max_reach")) else "out_of_reach"
        return self.result(outcome, writes={f"{self.node_id}.distance": round(distance, 3)})
