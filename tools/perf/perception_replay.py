"""Perception on recorded frames: time per frame and a digest of every output, to compare commits.

Why recorded frames: an episode's wall time mixes physics, rendering and perception, and timing
noise on a shared machine hides a perception change; replaying the very frames the episodes
surveyed (and the grasps they planned) times perception alone, and the digest (SHA-1 over every
scene object, mask, relation, located target and grasp pose) shows whether two commits give the
same outputs. The frames file is written on the first run and read by later ones, so two
checkouts replay identical inputs:

    python tools/perf/perception_replay.py --frames /tmp/frames.pkl [--episodes 4] [--repeats 1]
    PYTHONPATH=OTHER_CHECKOUT python tools/perf/perception_replay.py --frames /tmp/frames.pkl

Prints seconds for survey / locate / plan_grasps (mean over repeats) and the digest.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pickle
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bt_grasp.threads import use_one_thread

use_one_thread()  # before numpy is imported: one core means one thread

ROOT = Path(__file__).resolve().parents[2]
PERCEPTIONS = ("geometric", "sim")


def record(episodes: int, image_size: int) -> dict[str, list[Any]]:
    """Run the episodes (both backends) and keep each surveyed frame and each grasp-planning call."""
    from bt_grasp.bench.tasks import make_tasks
    from bt_grasp.bench.worker import close_worlds, run_task
    from bt_grasp.perception import geometric, grasps, sim_annotator

    frames: list[tuple[str, Any]] = []
    plans: list[tuple[Any, Any, tuple[Any, ...], dict[str, Any]]] = []
    saved = [(cls, cls.survey) for cls in (geometric.GeometricPerceiver, sim_annotator.SimPerceiver)]
    plan = grasps.plan_grasps
    for cls, survey in saved:
        def recorded(self: Any, obs: Any, survey: Any = survey) -> Any:
            frames.append((self.name, obs))
            return survey(self, obs)
        cls.survey = recorded  # type: ignore[method-assign]

    def planned(obs: Any, located: Any, *args: Any, **kwargs: Any) -> Any:
        plans.append((obs, located, args, kwargs))
        return plan(obs, located, *args, **kwargs)

    grasps.plan_grasps = planned  # type: ignore[assignment]
    try:
        tree = str(ROOT / "trees" / "clutter.yaml")
        with tempfile.TemporaryDirectory(prefix="bt_grasp_replay_cache_") as cache:
            os.environ["BT_GRASP_CACHE_DIR"] = cache
            for perception in PERCEPTIONS:
                for task in make_tasks([tree], [0], episodes, ["easy"], [perception], image_size):
                    rec = run_task(task)
                    print(f"recorded {perception} episode {task.episode}: {rec.get('decision')}", file=sys.stderr)
            close_worlds()
    finally:
        for cls, survey in saved:
            cls.survey = survey  # type: ignore[method-assign]
        grasps.plan_grasps = plan
    return {"frames": frames, "plans": plans}


def canonical(x: Any) -> Any:
    """A repr-stable form of an output: arrays by shape, dtype and content hash, floats by repr."""
    import numpy as np

    if isinstance(x, np.ndarray):
        return ("nd", x.shape, str(x.dtype), hashlib.sha1(np.ascontiguousarray(x).tobytes()).hexdigest())
    if isinstance(x, dict):
        return [(str(k), canonical(v)) for k, v in sorted(x.items(), key=lambda kv: str(kv[0]))]
    if isinstance(x, (list, tuple)):
        return [canonical(v) for v in x]
    if isinstance(x, float):
        return repr(x)
    if hasattr(x, "__dict__"):
        return (type(x).__name__, canonical(vars(x)))
    return repr(x)


def replay(data: dict[str, list[Any]], repeats: int) -> tuple[str, dict[str, float]]:
    """(digest of every output, seconds per stage averaged over repeats)."""
    from bt_grasp.perception import grasps
    from bt_grasp.perception.backends import make_perceiver

    outputs: list[Any] = []
    seconds = {"survey": 0.0, "locate": 0.0, "plan_grasps": 0.0}
    for r in range(repeats):
        perceivers = {name: make_perceiver(name) for name in PERCEPTIONS}
        for name, obs in data["frames"]:
            t = time.perf_counter()
            scene = perceivers[name].survey(obs)
            seconds["survey"] += time.perf_counter() - t
            if r == 0:
                outputs.append([(o.id, o.name, o.description, o.point2d, o.attributes, o.mask) for o in scene.objects])
                outputs.append(scene.relations)
            for o in scene.objects[:3]:
                t = time.perf_counter()
                loc = perceivers[name].locate(obs, o.name, scene)
                seconds["locate"] += time.perf_counter() - t
                if r == 0:
                    outputs.append(None if loc is None else vars(loc))
        for obs, located, args, kwargs in data["plans"]:
            t = time.perf_counter()
            poses = grasps.plan_grasps(obs, located, *args, **kwargs)
            seconds["plan_grasps"] += time.perf_counter() - t
            if r == 0:
                outputs.append(poses)
    digest = hashlib.sha1(repr(canonical(outputs)).encode()).hexdigest()
    return digest, {k: v / repeats for k, v in seconds.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", required=True, help="frames file: written if missing, else read")
    ap.add_argument("--episodes", type=int, default=4, help="episodes per backend when recording")
    ap.add_argument("--image-size", type=int, default=512)
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args(argv)
    path = Path(args.frames)
    if path.exists():
        data = pickle.loads(path.read_bytes())
    else:
        data = record(args.episodes, args.image_size)
        path.write_bytes(pickle.dumps(data))
    digest, seconds = replay(data, args.repeats)
    n = len(data["frames"])
    print(f"{n} frames, {len(data['plans'])} grasp plans: survey {seconds['survey']:.3f} s "
          f"({1000 * seconds['survey'] / max(n, 1):.0f} ms/frame), locate {seconds['locate']:.3f} s, "
          f"plan_grasps {seconds['plan_grasps']:.3f} s")
    print(f"digest {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
