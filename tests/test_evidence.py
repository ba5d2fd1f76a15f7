"""Evidence before FINALIZE: the semantic check and the delivery check answer from the robot's
own RGB-D frames (ok / mismatch / unknown, delivered / not_delivered / unknown), never from the
simulator's ground truth, and "no evidence" never reads as success."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from bt_grasp.blackboard import Blackboard
from bt_grasp.context import RunContext
from bt_grasp.default_registry import default_registry
from bt_grasp.drivers.base import Observation
from bt_grasp.nodes.evidence import CheckHeld, VerifyDelivery
from bt_grasp.nodes.watchdog import as_verdict
from bt_grasp.perception.types import SceneGraph, SceneObject
from bt_grasp.watchdog.semantic import TargetStillThere

H = W = 64
K = np.array([[64.0, 0, 32], [0, 64.0, 32], [0, 0, 1]])
T = np.array([[1.0, 0, 0, 0], [0, -1, 0, 0], [0, 0, -1, 1.0], [0, 0, 0, 1]])  # 1 m above, looking down
TARGET = (20, 30, 20, 30)  # the target's pixels at the pick
REGION = (np.array([0.24, -0.6, -0.01]), np.array([0.6, 0.6, 0.3]))  # the right strip of the view: the basket


def frame(heights: dict[tuple[int, int, int, int], float], colour=(200, 40, 40), clock: float = 0.0) -> Observation:
    depth = np.ones((H, W), np.float32)
    rgb = np.full((H, W, 3), 120, np.uint8)
    for (r0, r1, c0, c1), h in heights.items():  # pixel windows: rows r0:r1, columns c0:c1
        depth[r0:r1, c0:c1] = 1.0 - h
        rgb[r0:r1, c0:c1] = colour
    return Observation(rgb=rgb, depth=depth, K=K, T_cam_base=T, clock=clock)


class Driver:
    """Hands out scripted frames; knows its basket like a calibrated robot does."""

    def __init__(self, *frames: Observation, region=REGION) -> None:
        self.frames, self.region = list(frames), region

    def observe(self) -> Observation:
        return self.frames.pop(0) if len(self.frames) > 1 else self.frames[0]

    def place_region(self, target: str):
        return self.region if target == "basket" else None


class Perceiver:
    """Sees `objects` in every frame, or `at_pick` in the pick frame (clock 0) when given."""

    min_pixels = 1

    def __init__(self, objects=(), at_pick=None) -> None:
        self.objects, self.at_pick = list(objects), at_pick

    def survey(self, obs):
        seen = self.at_pick if self.at_pick is not None and obs.clock == 0 else self.objects
        return SceneGraph(objects=list(seen), relations=[], clock=obs.clock)

    def locate(self, obs, text, scene=None):
        return None


def ctx_with(driver, before: Observation | None, score: float = 1.0, objects=(), hidden: bool = False,
             name: str = "red box", query: str = "red box", at_pick=None) -> RunContext:
    mask = np.zeros((H, W), bool)
    mask[TARGET[0]:TARGET[1], TARGET[2]:TARGET[3]] = True
    located = SimpleNamespace(mask=mask, points_base=np.array([[0.0, 0.0, 0.03]]), name=name, score=score,
                              hidden_reading=hidden)
    bb = Blackboard({"target": located, "target.query": query, "target.frame": before})
    return RunContext(registry=default_registry(), driver=driver, perceiver=Perceiver(objects, at_pick),
                      blackboard=bb)


def seen(oid: int, name: str, colour: str, category: str, at: tuple[float, float, float],
         size: str | None = None) -> SceneObject:
    """A surveyed object as a perceiver names it, with its centroid in the base frame."""
    return SceneObject(oid, name, name, (0.5, 0.5), oid,
                       {"colour": colour, "category": category, "size": size, "centroid_base": list(at)})


PICK = frame({TARGET: 0.03})


@pytest.mark.parametrize("after, verdict", [
    (frame({TARGET: 0.045}, clock=1), "ok"),  # raised by the micro-lift
    (frame({}, clock=1), "ok"),  # gone from its place
    (frame({TARGET: 0.03}, clock=1), "mismatch"),  # still lying there
    (frame({TARGET: 0.034}, clock=1), "unknown"),  # too small a change to tell
    (frame({TARGET: 0.03, (20, 24, 20, 30): 0.05}, clock=1), "unknown"),  # tilted in the grip: median still
])
def test_the_semantic_check_reads_the_surface_where_the_target_was(after, verdict):
    assert TargetStillThere().check(ctx_with(Driver(after), PICK))[0] == verdict


def test_a_target_never_located_is_unknown_not_ok():
    ctx = ctx_with(Driver(PICK), PICK)
    ctx.blackboard.set("target", None)
    assert TargetStillThere().check(ctx)[0] == "unknown"


def test_without_the_pick_frame_a_target_that_vanished_is_unknown():
    assert TargetStillThere().check(ctx_with(Driver(frame({}, clock=1)), None))[0] == "unknown"


def test_verifier_answers_map_to_three_verdicts_and_none_is_never_ok():
    assert [as_verdict(a) for a in (True, False, None, "unknown", "ok")] == \
        ["ok", "mismatch", "unknown", "unknown", "ok"]


def _run(leaf_cls, driver, before=PICK, score=1.0, objects=(), hidden=False, name="red box", query="red box",
         at_pick=None, **params):
    ctx = ctx_with(driver, before, score, objects, hidden, name, query, at_pick)
    leaf = leaf_cls("check", params, ctx)
    status = leaf.update()
    return leaf.last_outcome, status, ctx


def test_check_held_is_a_perception_leaf_that_succeeds_only_on_ok():
    outcome, status, ctx = _run(CheckHeld, Driver(frame({TARGET: 0.03}, clock=1)))
    assert outcome == "mismatch" and status.name == "FAILURE"
    assert ctx.ledger.perception_calls == 1 and "still lies there" in ctx.blackboard.get("check.reason")


def test_delivery_seen_in_the_basket_and_gone_from_the_table():
    after = frame({(20, 30, 50, 60): 0.03}, clock=1)
    outcome, status, ctx = _run(VerifyDelivery, Driver(after))
    assert outcome == "delivered" and status.name == "SUCCESS", ctx.blackboard.get("check.reason")


DELIVERED = frame({(20, 30, 50, 60): 0.03}, clock=1)
ON_TABLE, IN_BASKET = (0.0, 0.0, 0.03), (0.4, 0.0, 0.03)


def test_a_weakly_grounded_target_delivered_is_not_the_goal_delivered():
    """The object delivered was only the least bad fit for the goal (a look-alike of a goal
    perhaps still hidden): the delivery is seen, but it is no evidence that the goal was."""
    outcome, _, ctx = _run(VerifyDelivery, Driver(DELIVERED), score=0.5)
    assert outcome == "not_delivered" and "weakly" in ctx.blackboard.get("check.reason")


def test_the_goal_still_grounding_to_an_object_on_the_table_is_not_delivered():
    outcome, _, ctx = _run(VerifyDelivery, Driver(DELIVERED), score=0.9,
                           objects=[seen(1, "red box", "red", "box", ON_TABLE)])
    assert outcome == "not_delivered" and "red box on the table" in ctx.blackboard.get("check.reason")


def test_objects_that_fit_the_goal_worse_or_lie_in_the_basket_are_no_rivals():
    objects = [seen(1, "blue box", "blue", "box", ON_TABLE), seen(2, "red box", "red", "box", IN_BASKET)]
    outcome, _, ctx = _run(VerifyDelivery, Driver(DELIVERED), objects=objects)
    assert outcome == "delivered", ctx.blackboard.get("check.reason")


def test_a_target_taken_for_the_goal_with_its_rest_hidden_must_look_like_it_once_delivered():
    """Located as what a partly hidden segment could be (a rounded end of a box under another):
    in the basket, in full view, the object delivered must fit the goal as seen."""
    ball = [seen(2, "red ball", "red", "ball", IN_BASKET)]
    outcome, _, ctx = _run(VerifyDelivery, Driver(DELIVERED), score=0.75, objects=ball, hidden=True)
    assert outcome == "not_delivered" and "in full view" in ctx.blackboard.get("check.reason")
    goal = [seen(2, "red box", "red", "box", IN_BASKET)]
    outcome, _, ctx = _run(VerifyDelivery, Driver(DELIVERED), score=0.75, objects=goal, hidden=True)
    assert outcome == "delivered", ctx.blackboard.get("check.reason")
    outcome, _, ctx = _run(VerifyDelivery, Driver(DELIVERED), score=0.75, objects=ball)  # located as seen
    assert outcome == "delivered", ctx.blackboard.get("check.reason")


def test_a_target_that_looked_like_another_kind_must_show_the_goals_kind_once_delivered():
    """Grounding took a red ball for the "red box" (the goal may be hidden, the ball its
    look-alike): in the basket, in full view, something must look like a red box."""
    ball = [seen(2, "red ball", "red", "ball", IN_BASKET)]
    outcome, _, ctx = _run(VerifyDelivery, Driver(DELIVERED), objects=ball, name="red ball")
    assert outcome == "not_delivered" and "another kind" in ctx.blackboard.get("check.reason")
    box = [seen(2, "red box", "red", "box", IN_BASKET)]
    outcome, _, ctx = _run(VerifyDelivery, Driver(DELIVERED), objects=box, name="red ball")
    assert outcome == "delivered", ctx.blackboard.get("check.reason")
    blue_box = [seen(2, "blue box", "blue", "box", IN_BASKET)]
    outcome, _, _ = _run(VerifyDelivery, Driver(DELIVERED), objects=blue_box, name="red ball")
    assert outcome == "not_delivered"


def test_a_target_that_looked_like_another_size_must_show_the_goals_size_once_delivered():
    """Grounding took a large red box for the "small red box" (the small one may be hidden): in
    the basket, in full view, something must look like a small red box."""
    large = [seen(2, "large red box", "red", "box", IN_BASKET, size="large")]
    outcome, _, ctx = _run(VerifyDelivery, Driver(DELIVERED), objects=large, name="large red box",
                           query="small red box")
    assert outcome == "not_delivered" and "another size" in ctx.blackboard.get("check.reason")
    small = [seen(2, "small red box", "red", "box", IN_BASKET, size="small")]
    outcome, _, ctx = _run(VerifyDelivery, Driver(DELIVERED), objects=small, name="large red box",
                           query="small red box")
    assert outcome == "delivered", ctx.blackboard.get("check.reason")


BROWN = (128, 77, 31)  # a purple duck's texture and a brown teddy bear both look brown
ARRIVED = (20, 30, 50, 60)


def in_basket_as(name: str, seen_colour: str, fits: dict[str, dict[str, float]],
                 window: tuple[int, int, int, int] = ARRIVED, oid: int = 9) -> SceneObject:
    """An object surveyed over `window` (by default where the delivery arrived in the basket),
    with its catalogue fits and the colour seen."""
    mask = np.zeros((H, W), bool)
    mask[window[0]:window[1], window[2]:window[3]] = True
    colour, category = name.split()[-2:]
    at = ON_TABLE if window == TARGET else IN_BASKET
    return SceneObject(oid, name, name, (0.5, 0.5), oid,
                       {"colour": colour, "category": category, "size": "large", "centroid_base": list(at),
                        "seen_colour": seen_colour, "name_scores": fits}, mask=mask)


def _deliver_brown(delivered: SceneObject, at_pick: SceneObject | None = None, query: str = "large purple duck"):
    """A brown object taken from TARGET lands at ARRIVED, seen there as `delivered` (and in the
    pick frame as `at_pick`, when given)."""
    pick, after = frame({TARGET: 0.03}, colour=BROWN), frame({ARRIVED: 0.03}, colour=BROWN, clock=1)
    return _run(VerifyDelivery, Driver(after), before=pick, objects=[delivered], name=query, query=query,
                at_pick=None if at_pick is None else [at_pick])


# Catalogue fits of a brown teddy bear located, and delivered, as "the large purple duck" (a dev
# scene): duck and teddy bear are both organic meshes, and the duck's colour word was read from
# its kind (purple ducks look brown), so nothing seen tells it from the brown teddy bear.
TIED = {"duck": {"small": 0.18, "large": 0.84}, "teddy bear": {"large": 0.78}, "mug": {"medium": 0.06}}


def test_a_goal_colour_read_from_a_kind_tied_with_another_kind_is_not_delivered():
    """Seen brown, named purple only because it was taken for a duck, and shaped about as much
    like a teddy bear, which comes in brown: the goal's colour and kind rest on one near tie,
    so the object delivered is as likely a brown teddy bear."""
    outcome, _, ctx = _deliver_brown(in_basket_as("large purple duck", "brown", TIED))
    assert outcome == "not_delivered" and "teddy bear" in ctx.blackboard.get("check.reason")


def test_a_kind_fitting_clearly_best_or_a_colour_seen_as_named_confirms_the_delivery():
    """The tie is what makes the reading doubtful: a duck fitting clearly better than any other
    kind is the duck; an object seen in the goal's own colour has that colour as evidence of its
    own (a purple puck that fits a lego brick nearly as well is still purple); and an ambiguous
    object that arrived earlier elsewhere in the basket is not the one delivered."""
    clear = {"duck": {"large": 0.84}, "teddy bear": {"large": 0.5}}
    outcome, _, ctx = _deliver_brown(in_basket_as("large purple duck", "brown", clear))
    assert outcome == "delivered", ctx.blackboard.get("check.reason")
    puck = {"puck": {"medium": 0.77}, "lego brick": {"small": 0.75}}
    pick, after = PICK, frame({ARRIVED: 0.03}, clock=1)
    outcome, _, ctx = _run(VerifyDelivery, Driver(after), before=pick, name="red puck", query="red puck",
                           objects=[in_basket_as("medium red puck", "red", puck)])
    assert outcome == "delivered", ctx.blackboard.get("check.reason")
    earlier = in_basket_as("large purple duck", "brown", TIED, window=(40, 50, 50, 60))
    outcome, _, ctx = _deliver_brown(earlier)
    assert outcome == "delivered", ctx.blackboard.get("check.reason")


def test_a_rival_kind_built_otherwise_or_fitting_nothing_at_the_pick_is_no_doubt():
    """Only kinds built alike are confused by shape (a lego brick's studs are not a duck's
    outline), and a landing pose can mimic a kind the object's rest pose at the pick did not fit
    at all: the rival must explain the object in the frame it was located in too."""
    brick = {"duck": {"large": 0.82}, "lego brick": {"small": 0.8}}  # lego bricks come in brown too
    outcome, _, ctx = _deliver_brown(in_basket_as("large purple duck", "brown", brick))
    assert outcome == "delivered", ctx.blackboard.get("check.reason")
    at_pick = {"duck": {"large": 0.9}, "teddy bear": {"large": 0.02}}
    picked = in_basket_as("large purple duck", "brown", at_pick, window=TARGET, oid=3)
    outcome, _, ctx = _deliver_brown(in_basket_as("large purple duck", "brown", TIED), picked)
    assert outcome == "delivered", ctx.blackboard.get("check.reason")
    at_pick = {"duck": {"large": 0.76}, "teddy bear": {"large": 0.55}}  # the dev scene's, at the pick
    picked = in_basket_as("large purple duck", "brown", at_pick, window=TARGET, oid=3)
    outcome, _, ctx = _deliver_brown(in_basket_as("large purple duck", "brown", TIED), picked)
    assert outcome == "not_delivered", ctx.blackboard.get("check.reason")


def test_target_still_on_the_table_is_not_delivered():
    after = frame({TARGET: 0.03, (20, 30, 50, 60): 0.03}, clock=1)
    assert _run(VerifyDelivery, Driver(after))[0] == "not_delivered"


def test_gone_but_nothing_seen_arriving_is_unknown():
    """E.g. dropped on the way, or landed where the camera cannot see: never "delivered"."""
    assert _run(VerifyDelivery, Driver(frame({}, clock=1)))[0] == "unknown"


def test_something_of_another_colour_arriving_is_unknown():
    after = frame({(20, 30, 50, 60): 0.03}, colour=(40, 40, 200), clock=1)
    before = frame({TARGET: 0.03})
    assert _run(VerifyDelivery, Driver(after), before)[0] == "unknown"


def test_the_target_arriving_beside_something_of_another_colour_is_delivered():
    """What arrived is judged pixel by pixel: an earlier drop that shifted in the basket does not
    hide the target's own pixels behind a mixed mean colour."""
    after = frame({(20, 30, 50, 60): 0.03}, clock=1)
    after.rgb[30:50, 40:64] = (40, 40, 200)
    after.depth[30:50, 40:64] = 1.0 - 0.05
    outcome, _, ctx = _run(VerifyDelivery, Driver(after))
    assert outcome == "delivered", ctx.blackboard.get("check.reason")


BASKET = (20, 30, 50, 60)  # pixels of the basket where things land
BLUE = (40, 40, 200)
BLACK, WHITE = (20, 20, 22), (225, 225, 220)


def test_a_black_target_is_not_seen_in_white_or_grey_matter_that_moved_in_the_basket():
    """Black, grey and white share one chromaticity: a black target is told by brightness too. A
    black bar that bounced out of the basket knocked a white can aside, and the can's new pixels
    and the grey floor it bared must not read as the bar arriving."""
    pick = frame({TARGET: 0.03}, colour=BLACK)
    before = frame({TARGET: 0.03, BASKET: 0.06}, colour=BLACK)
    before.rgb[BASKET[0]:BASKET[1], BASKET[2]:BASKET[3]] = WHITE
    before.rgb[TARGET[0]:TARGET[1], TARGET[2]:TARGET[3]] = pick.rgb[TARGET[0]:TARGET[1], TARGET[2]:TARGET[3]]
    after = frame({(40, 50, 50, 60): 0.06}, colour=WHITE, clock=1)  # the can, knocked aside
    assert _run(VerifyDelivery, Driver(after), before)[0] == "unknown"
    arrived = frame({BASKET: 0.03}, colour=(30, 30, 33), clock=1)  # the bar itself, a little lit
    outcome, _, ctx = _run(VerifyDelivery, Driver(arrived), pick)
    assert outcome == "delivered", ctx.blackboard.get("check.reason")


def test_a_white_target_is_still_seen_in_shade():
    """The brightness bound leaves room for shading: white seen half as bright still counts."""
    pick = frame({TARGET: 0.03}, colour=WHITE)
    outcome, _, ctx = _run(VerifyDelivery, Driver(frame({BASKET: 0.03}, colour=(115, 115, 112), clock=1)), pick)
    assert outcome == "delivered", ctx.blackboard.get("check.reason")


def _knocked_aside(landed_colour) -> tuple[Observation, Observation]:
    """Pick frame: the target on the table and a tall blue object standing in the basket. After:
    the table is empty, something of `landed_colour` lies low where the blue object stood, and
    the blue object lies knocked over beside it."""
    before = frame({TARGET: 0.03})
    before.depth[BASKET[0]:BASKET[1], BASKET[2]:BASKET[3]] = 1.0 - 0.08
    before.rgb[BASKET[0]:BASKET[1], BASKET[2]:BASKET[3]] = BLUE
    after = frame({BASKET: 0.03}, colour=landed_colour, clock=1)
    after.depth[40:50, 50:60] = 1.0 - 0.03
    after.rgb[40:50, 50:60] = BLUE
    return before, after


def test_the_target_landing_where_a_taller_object_stood_is_delivered():
    """Its surface is lower than the blue object's was, so only the colour it brought shows it
    arrived; a rise alone would call this delivery unknown."""
    before, after = _knocked_aside((200, 40, 40))
    outcome, _, ctx = _run(VerifyDelivery, Driver(after), before)
    assert outcome == "delivered", ctx.blackboard.get("check.reason")


def test_another_colour_landing_where_a_taller_object_stood_is_unknown():
    before, after = _knocked_aside((40, 200, 40))
    assert _run(VerifyDelivery, Driver(after), before)[0] == "unknown"


def test_the_target_colour_already_in_the_basket_settling_lower_is_no_arrival():
    """A red object already in the basket that only fell over is not the target arriving."""
    before = frame({TARGET: 0.03, BASKET: 0.08})
    after = frame({BASKET: 0.03}, clock=1)
    assert _run(VerifyDelivery, Driver(after), before)[0] == "unknown"


def test_arrivals_outside_the_place_region_do_not_count():
    after = frame({(20, 30, 34, 44): 0.03}, clock=1)  # on the table, not in the basket
    assert _run(VerifyDelivery, Driver(after))[0] == "unknown"


def test_the_target_landing_across_the_rim_is_unknown():
    """Of what arrived, columns 45-47 lie within 5 cm outside the basket's region (x < 0.24 m) and
    48-51 inside it: the object rests on the rim, not in the basket."""
    after = frame({(20, 30, 45, 52): 0.03}, clock=1)
    outcome, _, ctx = _run(VerifyDelivery, Driver(after))
    assert outcome == "unknown" and "rim" in ctx.blackboard.get("check.reason")


def test_a_target_in_the_basket_beside_the_rim_is_delivered():
    """A sliver outside the region (one column of ten) is the edge of an object lying inside."""
    after = frame({(20, 30, 47, 57): 0.03}, clock=1)
    outcome, _, ctx = _run(VerifyDelivery, Driver(after))
    assert outcome == "delivered", ctx.blackboard.get("check.reason")


def test_a_driver_without_a_region_gives_unknown():
    after = frame({(20, 30, 50, 60): 0.03}, clock=1)
    assert _run(VerifyDelivery, Driver(after, region=None))[0] == "unknown"


def test_the_pybullet_arm_knows_its_basket_in_the_base_frame():
    from bt_grasp.drivers.pybullet_arm import scene
    from bt_grasp.drivers.pybullet_arm.driver import PyBulletArm

    lo, hi = PyBulletArm.place_region(SimpleNamespace(), "basket")
    bx, by, _ = scene.BASKET_POS
    assert lo[0] < bx < hi[0] and lo[1] < by < hi[1] and np.allclose(hi[:2] - lo[:2], 0.3)
    assert PyBulletArm.place_region(SimpleNamespace(), "shelf") is None


def test_the_stretch_region_surrounds_its_named_place():
    from bt_grasp.drivers.stretch.driver import PLACE_HALF_M, StretchDriver
    from bt_grasp.profile import load_profile

    drv = StretchDriver(load_profile("robots/stretch3.yaml"), robot_factory=lambda: None)
    lo, hi = drv.place_region("basket")
    p = np.asarray(drv.opts.places["basket"])
    assert np.all(lo < p) and np.all(p < hi) and np.isclose(hi[0] - lo[0], 2 * PLACE_HALF_M)
    assert drv.place_region("nowhere") is None


def test_a_delivery_for_place_or_rank_words_of_an_object_they_did_not_choose_is_unknown():
    """"The farthest red box": the words chose one box, the scene changed as the robot worked,
    and the box delivered stood elsewhere when they chose (the locate marked it `other`). Its
    kind and colour fit, but it is not confirmed; words without a place or rank, or the box they
    chose, are."""
    other = {"at": [0.1, 0.1, 0.03], "colour": "red", "others": [[0.0, 0.0, 0.03]], "verdict": "other"}
    for query, choice, want in [("the farthest red box", other, "unknown"),
                                ("the red box left of the mug", other, "unknown"),
                                ("red box", other, "delivered"),
                                ("the farthest red box", {**other, "verdict": "chosen"}, "delivered")]:
        ctx = ctx_with(Driver(DELIVERED), PICK, query=query)
        ctx.blackboard.set("target.choice", choice)
        leaf = VerifyDelivery("check", {}, ctx)
        leaf.update()
        assert leaf.last_outcome == want, (query, ctx.blackboard.get("check.reason"))


def test_a_target_taken_for_another_kind_shows_the_goals_kind_only_when_it_is_clear():
    """A small white box taken for "the white can": in the basket it is named a can by a hair
    (can 0.8, box 0.78), which shows nothing; a can there whose fits say can clearly does."""
    by_a_hair = seen(2, "white can", "white", "can", IN_BASKET)
    by_a_hair.attributes["name_scores"] = {"can": {"small": 0.8}, "box": {"small": 0.78}}
    outcome, _, ctx = _run(VerifyDelivery, Driver(DELIVERED), objects=[by_a_hair], name="small white box",
                           query="the white can")
    assert outcome == "not_delivered" and "another kind" in ctx.blackboard.get("check.reason")
    by_a_hair.attributes["name_scores"] = {"can": {"small": 0.9}, "box": {"small": 0.4}}
    outcome, _, ctx = _run(VerifyDelivery, Driver(DELIVERED), objects=[by_a_hair], name="small white box",
                           query="the white can")
    assert outcome == "delivered", ctx.blackboard.get("check.reason")


def test_an_object_delivered_but_not_the_goal_voids_the_choice_of_the_words():
    """The object the words chose was delivered and found not to be the goal (another object
    fits it on the table): the choice is forgotten, so the next look chooses anew; a confirmed
    delivery keeps it, and so does a delivery of an object the words did not choose."""
    choice = {"at": [0.1, 0.1, 0.03], "colour": "red", "others": [], "verdict": "chosen"}
    rival = [seen(1, "red box", "red", "box", ON_TABLE)]
    other = {**choice, "verdict": "other"}
    for objects, remembered, want in [(rival, choice, None), ((), choice, choice), (rival, other, other)]:
        ctx = ctx_with(Driver(DELIVERED), PICK, score=0.9, objects=objects, query="the rightmost red box")
        ctx.blackboard.set("target.choice", remembered)
        VerifyDelivery("check", {}, ctx).update()
        assert ctx.blackboard.get("target.choice") == want, ctx.blackboard.get("check.reason")
