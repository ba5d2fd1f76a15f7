"""The arm's primitives on MuJoCo: pybullet_arm/primitives.py's, with the engine calls replaced.

grasp, lift, place, open_gripper and push run the PyBullet arm's bodies unchanged (same phases,
speeds, settle and hold times, hence the same telemetry for the Watchdog). Replaced: the CLOSE
phase's finger-speed reading and `remove_target_on_close` (MuJoCo cannot delete a body from a
compiled model, so the object is parked far below the table and forgotten), and the `friction`
and `mass` faults, which change the model's geom friction and body mass (labelling.py's
`set_body_mass`).
"""

from __future__ import annotations

from typing import Any

from bt_grasp.drivers.base import Execution, Fault, GraspPose
from bt_grasp.drivers.pybullet_arm.control import Planned, Steps
from bt_grasp.drivers.pybullet_arm.gripper import FINGER_FRICTION
from bt_grasp.drivers.pybullet_arm.primitives import PrimitivesMixin

PARKED_Z = -3.0  # where a removed object is kept (below the table, out of every query)


class MjPrimitivesMixin(PrimitivesMixin):
    """PrimitivesMixin with MuJoCo's finger state and model edits."""

    model: Any
    data: Any
    built: Any
    set_body_mass: Any

    def _prepare_grasp(self, pose: GraspPose, width: float, force: float) -> Execution | Planned:
        planned = super()._prepare_grasp(pose, width, force)
        if isinstance(planned, Execution):
            return planned
        aimed = planned.info.get("object")
        target = next((b for b, s in self.bodies.items() if s.name == aimed), None)
        inner = planned.body

        def body(faults: list[Fault]) -> Steps:
            kinds = {f.kind: f for f in faults}
            if target is not None:
                self._model_faults(target, kinds)
            yield from inner([f for f in faults if f.kind not in ("friction", "mass")])

        return Planned(planned.phase, body, planned.info)

    def _model_faults(self, target: int, kinds: dict[str, Fault]) -> None:
        """The `friction` and `mass` faults on the aimed-at object."""
        m = self.model
        if "mass" in kinds:
            self.set_body_mass(target, float(kinds["mass"].params.get("value", 2.0)))
        if "friction" in kinds:
            mu = float(kinds["friction"].params.get("value", 0.1))
            geoms = set(self.built.object_geoms.get(target, []))
            for g in geoms:
                m.geom_friction[g][0] = mu
            for p in range(m.npair):  # the pads' explicit pairs carry the product (objects.py)
                if int(m.pair_geom1[p]) in geoms or int(m.pair_geom2[p]) in geoms:
                    m.pair_friction[p][:2] = FINGER_FRICTION * mu

    def _take_out(self, body: int) -> None:
        """Take a body out of the scene (a compiled model keeps its bodies): far below the table,
        at rest, colliding with nothing."""
        m, d = self.model, self.data
        adr = int(m.jnt_qposadr[m.body_jntadr[body]])
        dof = int(m.jnt_dofadr[m.body_jntadr[body]])
        d.qpos[adr:adr + 3] = (0.0, 0.0, PARKED_Z)
        d.qvel[dof:dof + 6] = 0.0
        for g in range(m.ngeom):
            if m.geom_bodyid[g] == body:
                m.geom_contype[g] = m.geom_conaffinity[g] = 0
