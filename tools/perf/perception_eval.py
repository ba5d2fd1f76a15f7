"""Perception on the clutter benchmark's scenes: segmentation, naming and grounding, scored.

For every (lighting, seed, episode) the clutter benchmark's own scene (PyBulletArm.reset: same
generator, same lighting draw) is rendered once at --image-size and handed to the perceiver,
which sees RGB-D only. The annotator's instance masks are read *only here*, to score:

- segmentation: per-object precision and recall at IoU >= 0.5 (ground truth = catalogue objects
  with >= 20 visible pixels, plus the basket fixture when visible);
- naming: for each matched object, is the colour / shape noun (catalogue category) / size word
  the catalogue's;
- grounding: `locate(goal text)` (the benchmark's goal: the target's catalogue name) is correct
  when the located mask's majority instance is the target; `ambiguous` when it returned
  alternatives (the tree then asks instead of grasping) -- counted as not correct.

Rates carry N and Wilson 95 % intervals. Tune on dev seeds, report on fresh test seeds
(--split, bt_grasp/bench/splits.py, docs/benchmark.md). One JSONL line per scene, appended and flushed, keyed by
(perception, lighting, size, seed, episode): run the same command again to resume.

    python tools/perf/perception_eval.py --scenes 100 --lighting easy hard --out out/perception_eval
    python tools/perf/perception_eval.py --split test --scenes 200   # fresh held-out seeds only
    python tools/perf/perception_eval.py --from out/perception_eval/results.jsonl   # table only
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

from bt_grasp.threads import use_one_thread  # noqa: E402

use_one_thread()  # before numpy is imported: one core means one thread

import numpy as np  # noqa: E402

from bt_grasp.stats import wilson  # noqa: E402

MIN_PIXELS = 20
IOU = 0.5
VIS_BINS = (("<20%", 0.0, 0.2), ("20-40%", 0.2, 0.4), (">=40%", 0.4, 1.01))


def key_of(perception: str, lighting: str, size: int, seed: int, episode: int) -> str:
    return f"{perception}|{lighting}|{size}|{seed}|{episode}"


def iou_matrix(pred: list[np.ndarray], inst: np.ndarray, gt_ids: list[int]) -> np.ndarray:
    """IoU of every predicted mask with every ground-truth instance."""
    m = np.zeros((len(pred), len(gt_ids)))
    gt_area = {g: int((inst == g).sum()) for g in gt_ids}
    for i, mask in enumerate(pred):
        ids, counts = np.unique(inst[mask], return_counts=True)
        area = int(mask.sum())
        for g, c in zip(ids.tolist(), counts.tolist(), strict=True):
            if g in gt_area:
                j = gt_ids.index(g)
                m[i, j] = c / (area + gt_area[g] - c)
    return m


def _majority(inst: np.ndarray, mask: np.ndarray | None) -> int:
    """The instance id owning most of the mask's pixels (-1 for an empty or missing mask)."""
    if mask is None:
        return -1
    hit, cnt = np.unique(inst[mask], return_counts=True)
    return int(hit[np.argmax(cnt)]) if len(hit) else -1


def _target_segment(scene: Any, scores: dict[int, float], rows: list[int]) -> dict[str, Any] | None:
    """Why a grounding missed: the name and goal-text score of the segment matched to the target,
    and the best score of any other segment (None when the target was not segmented)."""
    if not rows:
        return None
    own = scene.objects[rows[0]]
    others = [v for k, v in scores.items() if k != own.id]
    return {"name": own.name, "score": round(float(scores.get(own.id, 0.0)), 3),
            "occluded": bool(scene.related(own.id, "partially_occluded_by")),
            "best_other": round(float(max(others, default=0.0)), 3)}


def _top_candidates(scene: Any, scores: dict[int, float], inst: np.ndarray, tgt_id: int | None) -> list[dict[str, Any]]:
    """The three best-scoring segments for the goal text: score, occluded, and whether the
    majority of the segment's pixels is the target (to study acceptance rules offline)."""
    out = []
    for oid in sorted(scores, key=lambda k: -scores[k])[:3]:
        o = scene.by_id(oid)
        out.append({"score": round(float(scores[oid]), 3), "name": o.name,
                    "occluded": bool(scene.related(oid, "partially_occluded_by")),
                    "is_target": _majority(inst, o.mask) == tgt_id})
    return out


def score_frame(obs: Any, scene: Any, located: Any, target: str, visibility: float,
                objects: dict[int, dict[str, Any]], basket_id: int | None) -> dict[str, Any]:
    """One scene's record: segmentation matches, naming per attribute, grounding outcome."""
    from scipy.optimize import linear_sum_assignment

    from bt_grasp.perception.grounding import score_objects
    from bt_grasp.perception.query import parse

    inst = np.asarray(obs.annotations["instance"])
    ids, counts = np.unique(inst, return_counts=True)
    visible = {int(i) for i, c in zip(ids, counts, strict=True) if c >= MIN_PIXELS}
    gt_ids = sorted(i for i in visible if i in objects)
    if basket_id is not None and basket_id in visible:
        gt_ids.append(basket_id)
    pred = [o.mask for o in scene.objects]
    m = iou_matrix(pred, inst, gt_ids)
    matched: list[tuple[int, int]] = []
    if m.size:
        ri, ci = linear_sum_assignment(-m)
        matched = [(int(r), int(c)) for r, c in zip(ri, ci, strict=True) if m[r, c] >= IOU]
    naming = {"colour": [0, 0], "category": [0, 0], "size": [0, 0]}
    names = []
    for r, c in matched:
        g = gt_ids[c]
        if g not in objects:
            continue
        truth, attrs = objects[g], scene.objects[r].attributes
        for k in naming:
            naming[k][1] += 1
            naming[k][0] += int(attrs.get(k) == truth[k])
        names.append([truth["name"], scene.objects[r].name])
    tgt_id = next((b for b, o in objects.items() if o["name"] == target), None)
    outcome = "missing"
    best_right = None  # was the best candidate the target (asked about or not)?
    if located is not None:
        major = _majority(inst, located.mask)
        best_right = major == tgt_id
        if getattr(located, "alternatives", []):
            outcome = "ambiguous"
        else:
            outcome = "correct" if major == tgt_id else "wrong"
    tgt_matched = any(gt_ids[c] == tgt_id for _, c in matched)
    scores = score_objects(parse(target), scene)  # the goal text against every segment, for both diagnostics
    seen_as = _target_segment(scene, scores, [r for r, c in matched if gt_ids[c] == tgt_id])
    top = _top_candidates(scene, scores, inst, tgt_id)
    return {"n_gt": len(gt_ids), "n_pred": len(pred), "n_match": len(matched),
            "basket_gt": basket_id in gt_ids, "basket_match": any(gt_ids[c] == basket_id for _, c in matched),
            "naming": naming, "names": names, "target": target, "visibility": round(float(visibility), 4),
            "target_segmented": tgt_matched, "grounding": outcome, "best_right": best_right,
            "target_seen_as": seen_as, "top": top,
            "located_name": None if located is None else located.name,
            "alternatives": [] if located is None else list(getattr(located, "alternatives", [])),
            "score": None if located is None else round(float(located.score), 3),
            "hidden_reading": bool(getattr(located, "hidden_reading", False)),
            "alternative_scores": [] if located is None else list(getattr(located, "alternative_scores", []))}


def run(args: argparse.Namespace) -> Path:
    from bt_grasp.bench.scene_cache import install_scene_cache
    from bt_grasp.bench.vocabulary import catalogue_vocabulary
    from bt_grasp.perception.backends import make_perceiver
    from bt_grasp.profile import load_profile
    from bt_grasp.world import make_driver

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results.jsonl"
    done = {json.loads(line)["key"] for line in results.read_text().splitlines() if line.strip()} \
        if results.exists() else set()
    install_scene_cache(args.scene_cache)  # one generated scene serves both lightings
    profile = load_profile(None)
    with results.open("a") as fh:
        scenes = [(s, e, lt) for s in args.seeds for e in range(args.first, args.first + args.scenes)
                  for lt in args.lighting]
        for seed, episode, lighting in scenes:
            k = key_of(args.perception, lighting, args.image_size, seed, episode)
            if k in done:
                continue
            driver = _drivers(profile, lighting, args.image_size, make_driver)
            obs = driver.reset(episode=episode, seed=seed)
            spec = driver.spec
            per = make_perceiver(args.perception, vocabulary=catalogue_vocabulary())
            t0 = time.perf_counter()
            scene = per.survey(obs)
            t1 = time.perf_counter()
            loc = per.locate(obs, spec.target, scene)
            t2 = time.perf_counter()
            rec = {"key": k, "perception": args.perception, "lighting": lighting,
                   "image_size": args.image_size, "seed": seed, "episode": episode,
                   **score_frame(obs, scene, loc, spec.target, spec.visibility,
                                 obs.annotations["objects"], obs.annotations.get("basket_id")),
                   "survey_ms": round(1000 * (t1 - t0), 1), "locate_ms": round(1000 * (t2 - t1), 1)}
            fh.write(json.dumps(rec) + "\n")
            fh.flush()
            if args.verbose:
                print(f"{k}: {rec['grounding']} {rec['target']!r} -> {rec['located_name']!r} "
                      f"vis={rec['visibility']:.2f} seg {rec['n_match']}/{rec['n_gt']}/{rec['n_pred']}",
                      flush=True)
    for d in _DRIVERS.values():
        d.close()
    return results


_DRIVERS: dict[tuple[str, int], Any] = {}


def _drivers(profile: Any, lighting: str, size: int, make_driver: Any) -> Any:
    if (lighting, size) not in _DRIVERS:
        _DRIVERS[(lighting, size)] = make_driver(profile, lighting=lighting, image_size=size)
    return _DRIVERS[(lighting, size)]


def _rate(k: int, n: int) -> str:
    if n == 0:
        return "n/a (N=0)"
    lo, hi = wilson(k, n)
    return f"{100 * k / n:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}] (N={n})"


def summarise(records: list[dict[str, Any]]) -> str:
    """Markdown table per (perception, lighting): segmentation, naming, grounding by visibility."""
    lines = []
    groups: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault((r["perception"], r["lighting"], r["image_size"]), []).append(r)
    for (per, light, size), recs in sorted(groups.items()):
        lines.append(f"\n### {per}, {light} lighting, {size}², {len(recs)} scenes\n")
        lines.append("| measure | rate [95 % CI] (N) |\n|---|---|")
        m, g, p = (sum(r[k] for r in recs) for k in ("n_match", "n_gt", "n_pred"))
        lines.append(f"| segmentation precision (IoU ≥ 0.5) | {_rate(m, p)} |")
        lines.append(f"| segmentation recall (IoU ≥ 0.5) | {_rate(m, g)} |")
        bg = sum(r["basket_gt"] for r in recs)
        lines.append(f"| basket segmented as one object | {_rate(sum(r['basket_match'] for r in recs), bg)} |")
        for attr in ("colour", "category", "size"):
            k = sum(r["naming"][attr][0] for r in recs)
            n = sum(r["naming"][attr][1] for r in recs)
            lines.append(f"| naming: {attr} word | {_rate(k, n)} |")
        for label, lo, hi in VIS_BINS:
            sel = [r for r in recs if lo <= r["visibility"] < hi]
            k = sum(r["grounding"] == "correct" for r in sel)
            lines.append(f"| grounding, target visibility {label} | {_rate(k, len(sel))} |")
        k = sum(r["grounding"] == "correct" for r in recs)
        lines.append(f"| grounding, all | {_rate(k, len(recs))} |")
        for outcome in ("wrong", "ambiguous", "missing"):
            k = sum(r["grounding"] == outcome for r in recs)
            lines.append(f"| grounding outcome: {outcome} | {_rate(k, len(recs))} |")
        hid = [r for r in recs if r.get("hidden_reading") and r["grounding"] != "ambiguous"]
        lines.append(f"| answers from a hidden reading, right | "
                     f"{_rate(sum(r['grounding'] == 'correct' for r in hid), len(hid))} |")
        asked = [r for r in recs if r["grounding"] == "ambiguous" and r.get("best_right") is not None]
        lines.append(f"| when ambiguous, the best candidate was the target | "
                     f"{_rate(sum(r['best_right'] for r in asked), len(asked))} |")
        ms = sorted(r["survey_ms"] for r in recs)
        lines.append(f"| survey ms (median, p95) | {ms[len(ms) // 2]:.0f}, "
                     f"{ms[min(len(ms) - 1, int(0.95 * len(ms)))]:.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--perception", default="geometric")
    ap.add_argument("--lighting", nargs="+", default=["easy", "hard"])
    ap.add_argument("--seed", "--seeds", dest="seeds", type=int, nargs="+", default=None,
                    help="base seeds (default 0)")
    ap.add_argument("--split", choices=["dev", "test"], default=None,
                    help="dev: tuning seeds (0-499; alone: 0-5); test: held-out seeds (500-999; "
                         "alone: the lowest unspent one); --seed must then lie in it (docs/benchmark.md)")
    ap.add_argument("--first", type=int, default=0, help="first episode index")
    ap.add_argument("--scenes", type=int, default=30, help="episodes per lighting")
    ap.add_argument("--image-size", type=int, default=512)
    ap.add_argument("--out", default=str(ROOT / "out" / "perception_eval"))
    ap.add_argument("--scene-cache", default=None, help="directory to keep generated scenes in")
    ap.add_argument("--from", dest="source", default=None, help="summarise this results.jsonl only")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    from bt_grasp.bench.splits import seeds_for
    from bt_grasp.errors import UserError

    try:
        args.seeds = seeds_for(args.split, args.seeds, [0])
    except UserError as exc:
        print(f"perception_eval: {exc}", file=sys.stderr)
        return 2
    path = Path(args.source) if args.source else run(args)
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    table = summarise(records)
    (path.parent / "table.md").write_text(table + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
