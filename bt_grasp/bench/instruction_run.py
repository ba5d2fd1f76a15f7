"""The referring-expression benchmark's side of one episode: the scene's ground truth read before
the run (to write the instruction), and the episode scored against what the instruction meant.

Ground truth is read here, by the benchmark, never by the perceiver: it gets only the text.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.bench.instructions import FORMS, Instruction, Present, generate
from bt_grasp.bench.metrics import success_finalize

VISIBLE_SHARE = 0.0015  # of the image's pixels: a few cm² of the object in view
ON_TABLE_Z = -0.02  # below this an object has fallen off the table


def present_objects(driver: Any, obs: Any) -> list[Present]:
    """The objects on the table after the reset: catalogue attributes, position, visible or not."""
    from bt_grasp.bench.catalogue import catalogue

    sizes: dict[str, set[str]] = {}
    for s in catalogue():
        sizes.setdefault(s.category, set()).add(s.size)
    instance = np.asarray((obs.annotations or {})["instance"])
    ids, counts = np.unique(instance, return_counts=True)
    pixels = {int(i): int(c) for i, c in zip(ids, counts, strict=True)}
    need = VISIBLE_SHARE * instance.size
    out = []
    for body, spec in driver.bodies.items():
        pose = driver.object_pose(spec.name)
        if pose is None or float(pose[0][2]) < ON_TABLE_Z:
            continue
        out.append(Present(spec.name, spec.category, spec.colour, spec.size,
                           (float(pose[0][0]), float(pose[0][1])), pixels.get(int(body), 0) >= need,
                           len(sizes.get(spec.category, ())) > 1))
    return out


def instruction_for(form: str, driver: Any, seed: int, episode: int) -> Instruction | None:
    """Reset the scene, read its ground truth and write the form's instruction (None: the scene
    has none of that form). The run resets the same scene again (a pure function of the seed)."""
    from bt_grasp.drivers.pybullet_arm import scene

    obs = driver.reset(episode=episode, seed=seed)
    target = driver.task()
    pool = [o for o in scene.object_catalogue() if scene.fits_gripper(o)]
    rng = np.random.default_rng([seed, episode, FORMS.index(form)])
    return generate(form, target, present_objects(driver, obs), pool, rng)


def score_instruction(inst: Instruction, rec: dict[str, Any], probe: Any, driver: Any) -> dict[str, Any]:
    """Grounding (the first locate of the text that returned a mask covers the referent; for
    `ambiguous` its candidates cover both; for `absent` no locate returned one), the right
    decision (the referent in the basket; WAIT_CLARIFY "ambiguous ..." / "not found ..."), and
    whether a success-FINALIZE was true."""
    from bt_grasp.goal_text import goal_object

    text = goal_object(inst.text)
    bodies = {n: b for b, n in driver.object_names().items()}
    refs = {bodies[n] for n in inst.referents if n in bodies}
    locates = [r for r in probe.locates if r["text"] == text]
    first = next((r for r in locates if r["found"]), None)
    reason = str(rec.get("reason", ""))
    in_basket = [n for n in inst.referents if driver.object_in_basket(n)]
    if inst.form == "absent":
        grounded = first is None
        right = rec["decision"] == "WAIT_CLARIFY" and reason.startswith("not found")
    elif inst.form == "ambiguous":
        grounded = first is not None and refs <= {first["body"], *first.get("alt_bodies", ())}
        right = rec["decision"] == "WAIT_CLARIFY" and reason.startswith("ambiguous")
    else:
        grounded = first is not None and first["body"] in refs
        right = bool(in_basket)
    claimed = success_finalize(rec)
    return {"form": inst.form, "instruction": inst.text, "referents": list(inst.referents),
            "instruction_detail": inst.detail, "form_grounded": bool(grounded), "right_decision": bool(right),
            "finalize_claimed": claimed, "finalize_true": bool(claimed and in_basket and inst.form != "absent")}
