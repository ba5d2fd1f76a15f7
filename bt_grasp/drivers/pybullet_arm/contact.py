"""Switches for how the gripper meets and carries objects, read at use; defaults = shipped behaviour.

Why a switch: tools/perf/contact_models.py compares contact models on the same episodes in one
process, and some of them change what the driver commands rather than an engine parameter: the
finger closing speed and the range of grip forces. A Robotiq 2F-85 closes at 20-150 mm/s and
grips with 20-235 N; the shipped fingers close at 2 x FINGER_SPEED_MPS = 160 mm/s and take any
force in [0, the profile's max_force_n]. Finger position targets never pass the stroke whatever
these say (control.py clamps them to [0, FINGER_TRAVEL_M]).

`carry_keeps_yaw` (on) is motion, not contact, but without it objects fly: `place` would carry to
the basket with the gripper turned to DOWN, and a straight-line move takes its final orientation
at its first 1 cm IK point, so the last wrist joint would turn the grasp's yaw at Bullet's
100 rad/s cap (a UR5e's wrist: 3.14 rad/s) and could fling the held object. With it the carry
keeps the grasp's orientation and the wrist does not turn.

`ik_near_seed` (on): IkSolver.solve wraps every joint into [-pi, pi), so when the last wrist joint
crosses +-pi along a line (the base turns during the carry and the wrist turns back to hold the
yaw), the next IK point's target would be a full turn away and the joint would spin it at
100 rad/s. With it each joint takes the 2pi-equivalent nearest the seed inside its limits.
Both off is the former behaviour, kept for comparison (tools/perf/contact_models.py, "before").

`depart_mps`: how fast a grasp or push leaves its starting spot upwards for the first DEPART_M
(params.py), the rest at free transit. A grasp that found nothing ends with open_gripper where it
closed, fingers among the neighbours; the next grasp or push starts by rising from there, and a
finger dragged up at free transit (0.8 m/s, 3.3 mm per physics step) through a neighbour it
touches lifts it into the finger, whose penetration the solver removes by velocity. A real arm
backs out of clutter slowly along the approach axis for the same reason (it cannot see what the
fingers touch); here at the descent's own speed, and the whole rise keeps the gripper's
orientation (routes.py, _depart): turning to the next grasp's yaw at the rise's first IK point
would swing the fingers through the neighbours, sometimes with an IK flip to another arm branch.

`turn_in_transit`: the transit to the pre-grasp (or above a push) turns the gripper evenly along
the line instead of at its first IK point, so the wrist turns at a bounded rate and IK, seeded
from the previous point, stays on the arm's branch. depart_mps at FREE_TRANSIT_MPS (0.8) is the
former rise ("before: fast depart").

`level_transit` (on): the free transit to the pre-grasp (or above a push) rises to SAFE_Z
(params.py) if below it, crosses at that height, and comes straight down to its end. A straight
line from where the last primitive ended (above the basket, or above an emptied grasp) to a
pre-grasp 10-15 cm over the table crossed whatever stood in between at its height: a pile's top
object, or a tall one standing in the basket, struck at up to 0.8 m/s. Off is the former
diagonal line.

`symmetric_yaw` (on): the two fingers are mirror images, so a grasp or a push turned a half turn about
its approach axis is the same grasp or push. With it the driver takes, of the two, the one nearer
the gripper's current orientation, so the wrist never turns more than a quarter turn between two
primitives. Without it the wrist may turn up to a half turn at the transit's first IK point, which
swings the fingers through the neighbours they are among at the joint cap, and a half-turn target
can send IK to another arm branch, sweeping the whole arm through the workspace.

`joint_speed_rps`: the most any arm joint turns per second. A line's joint targets move from one
IK point to the next in the time the tcp speed gives; where the joints would have to turn faster
(a turn at the first IK point, an IK point on another branch), the step takes longer instead. A
UR5e's joints are limited to 180 deg/s (pi rad/s); infinity is the former timing, where only
Bullet's 100 rad/s joint cap bounds them.

`release_z_m`: the tcp height `place` opens the gripper at. Shipped, 0.25 m: the held object falls
some 20 cm into the basket, reaching ~2 m/s, onto the basket's sloped near wall or the objects
delivered before it, and a glancing impact turns that into a sideways throw. The lowering from
the carry height (SAFE_Z) is always a guarded move at GUARDED_MPS (params.py): it stops where the
wrist load sensor feels what it holds rest on something (a real arm's "move until contact"), so a
pile under the drop spot is met, not rammed. Below 0.25 the guarded move goes on down to the
release floor (primitives.py) and the gripper opens where it stopped.

`close_force_n`: the grip force while the fingers close, below the asked force. An object a finger
meets off-centre or on a sloped face is wedged out of the closing fingers by the motor force, so
the fingers close at this force until both are blocked and the grip then rises to the asked force
over the settle's first `grip_ramp_s`, when both pads hold the object. The watchdog reads effort
at the end of the settle, by then at the asked force. Infinity is the shipped close, at the asked
force throughout.

`band_close_n_per_m` (3000 N/m, 3 N per millimetre): the grip force while the fingers close on a
low object, scaled by the height of side the pads can meet: from the fingertips (no lower than
TABLE_CLEARANCE_M above the table) to the object's top as the grasp planner measured it (the
pose's `object_top_z`; primitives.py closing_force, at least 10 N). A domino lying flat is 9.5 mm
tall, so the pads meet 6.5 mm of its side; a pad a few degrees off square meets it with its corner
near the top edge, and at the full grip the corner drives the object down into the table and it
slips out between the fingers (EMPTY). Closing at 3 N/mm of side (20 N on the domino) and ramping
to the asked force in the settle, when both pads hold it, holds it. Only objects under ~23 mm
tall close more softly: a grasp whose fingertips are not held up by the table has at least its
planned depth plus 15 mm of side between the pads, 69 N at 3 N/mm. Infinity is the former close
at the asked force, as is any pose without `object_top_z`. Measured: docs/studies/aim.md.

`finger_lead_m`: how far past its own position a closing finger's position target may be. Each
finger is a position motor whose velocity target is positionGain x (target - position) / dt, its
force capped at the grip force. The finger reference runs on to the closed stop while the fingers
are blocked, so a blocked finger's target ends up to 4 cm away: a velocity target of ~1.4 m/s
held back only by the object. If the object's other contact slips (a cube held on an edge, a
finger a few millimetres into it), that finger accelerates at the full grip force towards that
speed and throws the object out of the grip. With a lead the target stays this far ahead of the
finger, so a blocked finger still pushes at the full grip force (its velocity, 0, is under the
target), but a finger that loses its counterpart closes at no more than positionGain x lead / dt
(10 mm: 0.48 m/s). Opening is not limited. Too small a lead loses grasps: at 3 mm (0.14 m/s) the
solver leaves the two blocked fingers' forces a few newtons apart, and the pair walks sideways
with the object until it slips out. Infinity is the shipped control.

`pad_stiffness_n_m` / `pad_damping` (off; soft pads: 3e4 N/m, 1e3 N s/m, Franka's finger pads
in pybullet_data): the finger links' contact stiffness and damping. Rigid, a finger a few millimetres
into an object is pushed out at the solver's contact ERP and the grip force jumps between the two
contacts, so an object held on an edge or squeezed against a neighbour can be shot out; the soft
pads give at ~2 mm under a 60 N grip (effective ERP ~0.11 with damping), so the same penetration
is a spring, not a velocity kick. Set when the world is built (world_setup.py); infinity, shipped, is
a rigid pad ("soft pads" in tools/perf/contact_models.py). Off: they threw fewer on dev, but in
the closed loop on fresh scenes fewer deliveries were seen in the basket.

`rigid_objects` (off): objects, table and basket as rigid bodies (maximal coordinates) rather than
one-link multibodies, with Bullet's split impulse for every penetration between them. Split
impulse moves penetrating rigid bodies apart in a separate position pass, so the velocity they
keep is the contact's, not ERP x depth / dt; Bullet implements it only between rigid bodies, so a
finger (a multibody link) still pushes out by velocity. Set when the world is built and the
objects spawned; scenes are generated as multibodies, so every switch setting starts from the
same poses ("rigid objects" in tools/perf/contact_models.py). Off: it threw as many as the shipped
multibodies and delivered fewer, though its physics costs less than half.

`retreat_z_m` (0.40 m): after `place` has opened the gripper it rises to this tcp height (the
first DEPART_M at depart_mps). The basket fills up during an episode: a tall object standing on
the others reaches up between the open fingers at the release height, and the next primitive,
which narrows the fingers to its own opening and leaves sideways at free transit, squeezed it or
swept it out of the basket, off the table. Rising 15 cm takes the fingers clear of anything the
basket holds; an object wedged between the open fingers (a can whose diameter nearly fills the
stroke) comes along, out of the basket's region where the simulated camera, which does not draw
the robot, would show it as delivered, and one that falls on the way lands in the basket.
`rise_after_release` False is the former place, which rose only when the wrist still carried
weight (params.py WEDGED_N; "before: rise when wedged"); 0 m never rises ("before: no retreat").

`descent_guard_n` (off): the grasp's last descent, from the pre-grasp to the grasp pose at 0.15
m/s, is a guarded move (routes.py _guarded_line): it stops, and backs off, where the wrist load
sensor feels the gripper pushed up by this many newtons, and the fingers close there. Without it
a finger that lands on a neighbour the grasp planner let it brush (params.py FINGER_TOL_M) but
that cannot move aside (wedged in a pile) is driven 1-2 cm into it, some 500 N, and the solver
pushes that penetration out by velocity, throwing the neighbour and those it touches. Too low a
threshold also stops on a light touch of the target's own top edge, and the grasp closes above it.
Off: at 150 N it removed the approach launches, but closing where the descent stopped squeezed
more objects out, so no fewer were thrown.

Measured figures: docs/studies/contact-model.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from bt_grasp.drivers.pybullet_arm.gripper import FINGER_SPEED_MPS
from bt_grasp.drivers.pybullet_arm.params import DEPART_MPS
from bt_grasp.drivers.pybullet_arm.speed import set_switches


@dataclass
class ContactOptions:
    finger_speed_mps: float = FINGER_SPEED_MPS  # per finger; the gap closes at twice this
    force_min_n: float = 0.0                    # grip forces are clipped to [min, min(max, profile max)]
    force_max_n: float = math.inf
    carry_keeps_yaw: bool = True                # place carries with the grasp's yaw, not DOWN
    ik_near_seed: bool = True                   # IK returns each joint's turn nearest the seed
    depart_mps: float = DEPART_MPS              # the first DEPART_M of leaving a spot upwards
    turn_in_transit: bool = False               # the transit to the pre-grasp turns along the line
    level_transit: bool = True                  # the transit crosses at SAFE_Z, not on a diagonal
    symmetric_yaw: bool = True                  # grasp/push yaw: of yaw and yaw + pi the nearer one
    joint_speed_rps: float = math.inf           # joint targets move at most this fast (rad/s)
    release_z_m: float = 0.25                   # place opens at this tcp height (below 0.25: guarded)
    close_force_n: float = math.inf             # grip force while closing (then ramped to the asked one)
    grip_ramp_s: float = 0.15                   # settle time over which the grip rises to the asked force
    band_close_n_per_m: float = 3000.0          # closing force per metre of side the pads meet (low objects)
    finger_lead_m: float = math.inf             # a closing finger's target at most this past its position
    pad_stiffness_n_m: float = math.inf         # finger links' contactStiffness (3e4: soft pads)
    pad_damping: float = 1e3                    # finger links' contactDamping (with a stiffness)
    rigid_objects: bool = False                 # objects, table, basket as rigid bodies + split impulse
    retreat_z_m: float = 0.40                   # place rises here after the release
    rise_after_release: bool = True             # False: only when the wrist still feels weight
    descent_guard_n: float = math.inf           # grasp's last descent stops where the wrist feels this


CONTACT = ContactOptions()


def set_contact(**values: Any) -> dict[str, Any]:
    """Set switches in place (the driver reads CONTACT at use); returns the previous values."""
    return set_switches(CONTACT, "contact", values)


def reset_contact() -> None:
    """Back to the shipped behaviour."""
    set_contact(**{f.name: f.default for f in fields(ContactOptions)})
