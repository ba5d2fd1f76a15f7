"""`bt-grasp perceive BAG --topic-rgb T --topic-depth T [--topic-info T] --goal "..."`: the geometric
perceiver's survey and locate on a recorded bag's frames, one line per frame (or JSON).

What it is for: checking perception offline on frames recorded from a real camera (any ROS 2
driver's bag: rgb8/bgr8 colour, 32FC1 or 16UC1 depth aligned to it, CameraInfo and the camera
pose on /tf) or from a simulated run (`bt-grasp run --record run.db3 --record-images`), without
a robot or a simulator. One perceiver surveys the frames in order, so object ids are tracked
across frames as they are during a run.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from bt_grasp.errors import UserError


def add_perceive_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("perceive", help="run the geometric perceiver on a ROS 2 bag's RGB-D frames")
    p.add_argument("bag", help="a rosbag2 folder or its .db3 file")
    p.add_argument("--topic-rgb", required=True, help="colour images (sensor_msgs/msg/Image, rgb8/bgr8)")
    p.add_argument("--topic-depth", required=True,
                   help="depth images aligned to the colour ones (32FC1 metres or 16UC1 millimetres)")
    p.add_argument("--topic-info", default=None,
                   help="the colour camera's sensor_msgs/msg/CameraInfo (default: the bag's only one)")
    p.add_argument("--goal", required=True, help='what to locate, e.g. "Grasp the red mug"')
    p.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    p.set_defaults(func=cmd_perceive)


def locate_frames(frames: list[Any], goal: str) -> list[tuple[Any, Any]]:
    """(scene, Located or None) of the goal's object in each frame, surveyed in order by one
    GeometricPerceiver (so ids are tracked across frames)."""
    from bt_grasp.goal_text import goal_object
    from bt_grasp.perception.geometric import GeometricPerceiver

    target = goal_object(goal)
    perceiver = GeometricPerceiver()
    out = []
    for obs in frames:
        scene = perceiver.survey(obs)
        out.append((scene, perceiver.locate(obs, target, scene)))
    return out


def summary(i: int, obs: Any, target: str, scene: Any, loc: Any) -> dict[str, Any]:
    """One frame's result as JSON."""
    found = None
    if loc is not None:
        found = {"name": loc.name, "object_id": int(loc.object_id), "bbox": [int(x) for x in loc.bbox],
                 "pixels": int(loc.mask.sum()), "score": round(float(loc.score), 3),
                 "occluded_by": [int(x) for x in loc.occluded_by], "alternatives": list(loc.alternatives)}
    return {"frame": i, "t": round(float(obs.clock), 6), "target": target,
            "objects": [o.name for o in scene.objects], "located": found}


def line(result: dict[str, Any], total: int) -> str:
    head = f"{result['t']:.3f} s  frame {result['frame']}/{total}  {result['target']}: "
    found = result["located"]
    if found is None:
        return head + f"not found among {len(result['objects'])} objects"
    u0, v0, u1, v1 = found["bbox"]
    text = (head + f"{found['name']} (object {found['object_id']}), bbox {u0},{v0}-{u1},{v1}, "
            f"{found['pixels']} px, score {found['score']:.2f}")
    if found["alternatives"]:
        text += f", as likely: {', '.join(found['alternatives'])}"
    return text


def cmd_perceive(args: argparse.Namespace) -> int:
    from bt_grasp.observe.rosbag_read import read_frames

    if not args.goal.strip():
        raise UserError("--goal is empty (say what to locate, e.g. \"Grasp the red mug\")", file=args.bag)
    from bt_grasp.goal_text import goal_object
    from bt_grasp.quiet import import_pybullet_quietly

    import_pybullet_quietly()  # the perception package imports it: no banner in the output
    frames = read_frames(args.bag, args.topic_rgb, args.topic_depth, args.topic_info)
    target = goal_object(args.goal)
    results = [summary(i, obs, target, scene, loc)
               for i, (obs, (scene, loc)) in enumerate(zip(frames, locate_frames(frames, args.goal), strict=True), 1)]
    if args.json:
        print(json.dumps({"bag": args.bag, "goal": args.goal, "frames": results}))
    else:
        for r in results:
            print(line(r, len(results)))
    return 0
