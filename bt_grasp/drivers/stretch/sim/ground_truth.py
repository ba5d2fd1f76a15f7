"""Ground truth of the simulated Stretch's world: where objects are, what the fingers hold, what
is in the basket; what a simulator knows and a real robot does not."""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.drivers.stretch.sim.scene import BASKET_CENTRE, BASKET_INNER, TABLE_HEIGHT, SimObject


class GroundTruthMixin:
    """Mixin of StretchWorld: positions and states read straight from the physics."""

    pb: Any
    cid: int
    robot: int
    link: dict[str, int]
    objects: dict[int, SimObject]
    left_links: set[int]
    right_links: set[int]

    def grasp_center(self) -> np.ndarray:
        return np.array(self.pb.getLinkState(self.robot, self.link["link_grasp_center"],
                                             physicsClientId=self.cid)[4])

    def _body_by_name(self, name: str) -> int | None:
        return next((b for b, o in self.objects.items() if o.spec.name == name), None)

    def object_position(self, body: int) -> np.ndarray:
        return np.array(self.pb.getBasePositionAndOrientation(body, physicsClientId=self.cid)[0])

    def nearest_object(self, point: np.ndarray | None, within: float = 0.12) -> int | None:
        if point is None or not self.objects:
            return None
        best = min(self.objects, key=lambda b: float(np.linalg.norm(self.object_position(b) - point)))
        return best if np.linalg.norm(self.object_position(best) - point) <= within else None

    def held_object(self) -> str | None:
        """The object touched by both fingers and off its resting height (or its support)."""
        for b, o in self.objects.items():
            cps = self.pb.getContactPoints(self.robot, b, physicsClientId=self.cid)
            links = {c[3] for c in cps}
            lifted = self.object_position(b)[2] > o.rest_z + 0.005
            if links & self.left_links and links & self.right_links and lifted:
                return o.spec.name
        return None

    def object_names(self) -> dict[int, str]:
        return {b: o.spec.name for b, o in self.objects.items()}

    def object_in_basket(self, name: str) -> bool:
        b = self._body_by_name(name)
        if b is None:
            return False
        x, y, z = self.object_position(b)
        h = BASKET_INNER / 2
        return (abs(x - BASKET_CENTRE[0]) <= h and abs(y - BASKET_CENTRE[1]) <= h
                and TABLE_HEIGHT <= z <= TABLE_HEIGHT + 0.15)
