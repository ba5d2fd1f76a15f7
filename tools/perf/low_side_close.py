"""Does a grasp hold a low flat object when its yaw is a few degrees off square?

A flat box 76 mm long (a domino lying flat, and taller ones) alone on the table, grasped top-down
across its width at 60 N with the grasp yaw 0-15 degrees off square and the grasp point 0 or
+-4 mm off centre, on the PyBullet arm. Printed per height and width: the Watchdog's label of each
grasp (S success, E empty, L slip, W weak, T stall, O timeout) and how many held, under the shipped close (3 N per
millimetre of side between the fingertips and the object's top, then the grip; contact.py
band_close_n_per_m) and the former full-force close.

    python tools/perf/low_side_close.py [--heights 6 9.5 12 15 20 25] [--widths 38] [--misalign 0 3 6 10 15 -10]

The pose carries the object's true top (`object_top_z`), as the planner measures it from the
depth image: this isolates the close from perception.
"""

from __future__ import annotations

import argparse
import math
import sys

from bt_grasp.threads import use_one_thread

use_one_thread()  # before numpy is imported

MISALIGN_DEG = (0.0, 3.0, 6.0, 10.0, 15.0, -10.0)
OFFSETS_M = (0.0, 0.004, -0.004)
LETTER = {"SUCCESS": "S", "EMPTY": "E", "SLIP": "L", "WEAK": "W", "STALL": "T", "TIMEOUT": "O"}
CLOSES = {"soft close (shipped)": 3000.0, "full-force close (before)": math.inf}


def main(argv: list[str] | None = None) -> int:
    import numpy as np
    import pybullet as pb

    from bt_grasp.bench.objects import ObjectSpec
    from bt_grasp.drivers.base import GraspPose
    from bt_grasp.drivers.pybullet_arm.contact import reset_contact, set_contact
    from bt_grasp.drivers.pybullet_arm.driver import PyBulletArm
    from bt_grasp.profile import load_profile
    from bt_grasp.world import make_services

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--heights", type=float, nargs="+", default=[6.0, 9.5, 12.0, 15.0, 20.0, 25.0], help="mm")
    ap.add_argument("--widths", type=float, nargs="+", default=[38.0], help="mm, across the grasp")
    ap.add_argument("--misalign", type=float, nargs="+", default=list(MISALIGN_DEG), help="degrees off square")
    args = ap.parse_args(argv)
    profile = load_profile("ur5e_robotiq")
    arm, classify = PyBulletArm(profile, image_size=64), make_services(profile).classify
    try:
        for name, per_m in CLOSES.items():
            set_contact(band_close_n_per_m=per_m)
            for w_mm in args.widths:
                for h_mm in args.heights:
                    h, w = h_mm / 1000, w_mm / 1000
                    box = ObjectSpec("flat box", "box", "white", "small", "box", (0.076, w, h),
                                     (0.9, 0.9, 0.9, 1.0), round(450 * 0.076 * w * h, 4), 0.6)
                    cells, held = [], 0
                    for mis in args.misalign:
                        labels = ""
                        for off in OFFSETS_M:
                            arm.clear_faults()
                            arm.reset_scene([box], [(0.5, 0.0, h / 2 + 0.001)], target=box.name)
                            q = pb.getQuaternionFromEuler([math.pi, 0.0, math.radians(90.0 + mis)])
                            pose = GraspPose(np.array([0.5, off, h / 2]), np.array(q), w + 0.02,
                                             metadata={"object_top_z": h})
                            label = classify(arm.grasp(pose, w + 0.02, 60.0).telemetry).label.value
                            labels += LETTER.get(label, "?")
                            held += label == "SUCCESS"
                        cells.append(f"{mis:+.0f}°:{labels}")
                    n = len(args.misalign) * len(OFFSETS_M)
                    print(f"{name}: {h_mm:g} mm tall, {w_mm:g} mm wide: held {held}/{n}  " + "  ".join(cells),
                          flush=True)
    finally:
        reset_contact()
        arm.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
