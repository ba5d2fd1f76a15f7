"""Episode generation: 15 objects dropped into a temporary bin, settled, target chosen by visibility.

Pure function of the seed: each episode is simulated in its own emptied DIRECT client (so the
driver's history cannot change it) and returned as data (EpisodeSpec) that the driver
re-instantiates; results are kept in the per-user scene cache (cache.py).
Clutter comes from a 0.22 m walled drop region: free drops on an open table almost never occlude
from overhead (0-3 % of targets under 40 % visible, measured), a walled bin of about that size does
(29-34 % for a random target); the walls are removed before the scene is used.
Episode seed = base_seed + 1000 × episode_index (episode_seed()).
"""

from __future__ import annotations

import math
import os
import pickle
from dataclasses import dataclass, field

import numpy as np
import pybullet as pb

from bt_grasp.bench.objects import ObjectSpec
from bt_grasp.drivers.pybullet_arm import scene
from bt_grasp.drivers.pybullet_arm.cache import cache_root, content_key, source_digest, write_atomic
from bt_grasp.drivers.pybullet_arm.camera import Camera
from bt_grasp.drivers.pybullet_arm.speed import OPTIONS

HIGH_CLUTTER_VISIBILITY = 0.4
FAR = 50.0


@dataclass
class EpisodeSpec:
    """A settled scene: objects (spawn order), their poses, the target and its measured visibility."""

    seed: int
    objects: list[ObjectSpec]
    target: str
    poses: list[tuple[tuple[float, ...], tuple[float, ...]]]  # (position, quaternion xyzw) per object
    visibility: float
    high_clutter: bool
    visibilities: dict[str, float] = field(default_factory=dict)  # objects measured while choosing
    wanted_high_clutter: bool | None = None
    absent: str | None = None  # goal words that fit no catalogue object: the scene holds none

    def pose_of(self, name: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
        return self.poses[[o.name for o in self.objects].index(name)]


def episode_seed(base_seed: int, episode: int) -> int:
    return int(base_seed) + 1000 * int(episode)


def default_camera(size: int = 256) -> Camera:
    """The ur5e_robotiq profile's camera (constants if the profile file is unavailable)."""
    try:
        from bt_grasp.profile import load_profile
        cam = load_profile("ur5e_robotiq").camera
        return Camera(size, size, cam.fov_deg, cam.near, cam.far, cam.T())
    except Exception:  # noqa: BLE001 - fall back to the same numbers as robots/ur5e_robotiq.yaml
        return Camera(size, size, 50.0, 0.05, 2.0, overhead_T())


def overhead_T(height: float = 0.85) -> np.ndarray:
    """Camera straight above the bin centre; image up = away from the robot (+x)."""
    T = np.eye(4)
    T[:3, :3] = np.array([[0.0, -1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, -1.0]])
    T[:3, 3] = (scene.BIN_CENTRE[0], scene.BIN_CENTRE[1], height)
    return T


def wants_high_clutter(seed: int, share: float) -> bool:
    """Stratified, not drawn: over consecutive episodes of one base seed (seed = base + 1000 × i)
    exactly round(share × n) want a high-clutter target; the base seed shifts the pattern."""
    index, base = divmod(int(seed), 1000)
    phase = (base * 0.6180339887498949) % 1.0
    share = float(np.clip(share, 0.0, 1.0))
    return math.floor((index + 1) * share + phase) > math.floor(index * share + phase)


def _choose_objects(rng: np.random.Generator, n: int, target: str | None,
                    objects: list[ObjectSpec] | None) -> tuple[list[ObjectSpec], str | None, str | None]:
    """(objects, the target's catalogue name or None, goal words that fit no object or None).

    A target that is not a catalogue name is grounded (bench.goal_scene): one object its words
    fit, chosen by the seed, and none of the others it fits; words that fit nothing leave the
    scene without such an object. A catalogue name takes the same draws as it always did."""
    if objects is not None:
        chosen: list[ObjectSpec] = list(objects)
        if target is not None and target not in [o.name for o in chosen]:
            raise ValueError(f"target {target!r} is not among the given objects")
        return chosen, target, None
    pool = [o for o in scene.object_catalogue() if scene.fits_gripper(o)]
    by_name = {o.name.lower(): o for o in pool}
    chosen = []
    absent = None
    if target is not None and target.lower() not in by_name:
        from bt_grasp.bench.goal_scene import goal_objects

        fit = goal_objects(target, pool)
        if fit.absent:
            target, absent = None, target
        else:
            target = fit.fitting[int(rng.integers(len(fit.fitting)))].name
            chosen.append(by_name[target.lower()])
        others = {o.name for o in fit.fitting}
        if len(pool) - len(others) < n - len(chosen):  # words that fit (nearly) anything: keep the rest
            others = {target or ""}
        pool = [o for o in pool if o.name not in others]
    elif target is not None:
        chosen.append(by_name[target.lower()])
        pool = [o for o in pool if o.name.lower() != target.lower()]
    k = min(n - len(chosen), len(pool))
    idx = rng.choice(len(pool), size=k, replace=False)
    chosen += [pool[i] for i in sorted(idx)]
    return chosen, (chosen[0].name if target is not None else None), absent


def _drop(client: int, specs: list[ObjectSpec], rng: np.random.Generator) -> list[int]:
    """Staggered drops inside the walled bin, settle, remove walls, settle again."""
    walls = scene.add_walls(client)
    order = rng.permutation(len(specs))
    bodies = [0] * len(specs)
    reach = scene.BIN_HALF - 0.035
    for rank, i in enumerate(order):
        x = scene.BIN_CENTRE[0] + rng.uniform(-reach, reach)
        y = scene.BIN_CENTRE[1] + rng.uniform(-reach, reach)
        z = 0.06 + 0.05 * rank
        orn = pb.getQuaternionFromEuler([rng.uniform(-0.3, 0.3), rng.uniform(-0.3, 0.3), rng.uniform(0, np.pi)])
        bodies[i] = scene.spawn(client, specs[i], (x, y, z), orn)
    scene.settle(client, bodies, max_s=4.0)
    for w in walls:
        pb.removeBody(w, physicsClientId=client)
    scene.settle(client, bodies, max_s=1.5)
    return bodies


def _eligible(client: int, body: int, reachable) -> bool:
    """On the table (inside it, not fallen) and reachable by a top-down grasp."""
    pos, _ = pb.getBasePositionAndOrientation(body, physicsClientId=client)
    lo, hi = pb.getAABB(body, -1, physicsClientId=client)
    tx, ty = scene.TABLE_CENTRE
    on_table = (lo[2] > -0.01 and abs(pos[0] - tx) < scene.TABLE_SIZE[0] / 2 - 0.05
                and abs(pos[1] - ty) < scene.TABLE_SIZE[1] / 2 - 0.05)
    if not on_table:
        return False
    return bool(reachable(np.array(pos), float(hi[2]))) if reachable is not None else True


def measure_visibility(client: int, camera: Camera, bodies: list[int], body: int,
                       scene_counts: dict[int, int]) -> float:
    """Visible pixels in the scene / pixels when rendered alone (others moved far away)."""
    saved = {b: pb.getBasePositionAndOrientation(b, physicsClientId=client) for b in bodies if b != body}
    for k, b in enumerate(saved):
        pb.resetBasePositionAndOrientation(b, (FAR + k, FAR, FAR), (0, 0, 0, 1), physicsClientId=client)
    alone = camera.count_pixels(client, body)
    for b, (p, o) in saved.items():
        pb.resetBasePositionAndOrientation(b, p, o, physicsClientId=client)
    return 0.0 if alone == 0 else min(1.0, scene_counts.get(body, 0) / alone)


def _default_reachable():
    from bt_grasp.drivers.pybullet_arm.ik import shared_solver

    down = np.array(pb.getQuaternionFromEuler([np.pi, 0, 0]))

    def reachable(pos: np.ndarray, top_z: float) -> bool:
        solver = shared_solver()
        for z in (max(pos[2], 0.015), top_z + 0.12):
            _, err, _ = solver.solve(np.array([pos[0], pos[1], z]), down, iters=8, tol=1e-3)
            if err > 2e-3:
                return False
        return True

    return reachable


# Modules whose code decides a generated scene: a change in any of them is a new cache key.
_GENERATOR_MODULES = ("bt_grasp.drivers.pybullet_arm.episodes", "bt_grasp.drivers.pybullet_arm.scene",
                      "bt_grasp.drivers.pybullet_arm.camera", "bt_grasp.drivers.pybullet_arm.ik",
                      "bt_grasp.drivers.pybullet_arm.gripper", "bt_grasp.bench.objects")
_DIGEST: dict[str, str] = {}
_GEN_CLIENT: dict[str, int] = {}


def _scene_key(seed: int, n_objects: int, target: str | None, objects: list[ObjectSpec] | None,
               high_clutter_share: float, min_visibility: float, camera: Camera, max_attempts: int) -> str:
    """Everything generate_episode's result depends on: arguments, object list, camera geometry,
    the generator's source and the pybullet version."""
    if "d" not in _DIGEST:
        _DIGEST["d"] = source_digest(*_GENERATOR_MODULES)
    pool = objects if objects is not None else scene.object_catalogue()
    cam = (camera.width, camera.height, camera.fov_deg, camera.near, camera.far, camera.T_cam_base.tobytes().hex())
    return content_key("episode", int(seed), int(n_objects), target, objects is None, list(pool),
                       float(high_clutter_share), float(min_visibility), cam, int(max_attempts),
                       _DIGEST["d"], pb.getAPIVersion())


def _scene_cache_on() -> bool:
    return OPTIONS.scene_cache and os.environ.get("BT_GRASP_SCENE_CACHE", "on").lower() not in ("0", "off", "no")


def _client() -> int:
    """A DIRECT client for one drop attempt: the process's shared one, emptied (resetSimulation
    gives the same scene as a fresh client, tests/test_arm_speed.py), or a new one (legacy)."""
    if not OPTIONS.shared_generator:
        return pb.connect(pb.DIRECT)
    c = _GEN_CLIENT.get("c")
    if c is None or not pb.isConnected(c):
        c = _GEN_CLIENT["c"] = pb.connect(pb.DIRECT)
    else:
        pb.resetSimulation(physicsClientId=c)
    return c


def _release(client: int) -> None:
    if _GEN_CLIENT.get("c") != client:
        pb.disconnect(client)


def close_generator() -> None:
    """Disconnect the shared generation client (a later generate_episode makes a new one)."""
    c = _GEN_CLIENT.pop("c", None)
    if c is not None and pb.isConnected(c):
        pb.disconnect(c)


def generate_episode(seed: int, n_objects: int = 15, target: str | None = None,
                     objects: list[ObjectSpec] | None = None, *, high_clutter_share: float = 0.5,
                     min_visibility: float = 0.05, camera: Camera | None = None,
                     reachable=None, max_attempts: int = 4) -> EpisodeSpec:
    """generate_scene, through the per-user scene cache (cache.py) unless a custom `reachable`
    is given or the cache is off: a hit is the pickled result of the same computation."""
    camera = camera or default_camera(256)
    args = (seed, n_objects, target, objects, high_clutter_share, min_visibility, camera, max_attempts)
    if reachable is not None or not _scene_cache_on():
        return generate_scene(*args[:4], high_clutter_share=high_clutter_share, min_visibility=min_visibility,
                              camera=camera, reachable=reachable, max_attempts=max_attempts)
    path = cache_root() / "scenes" / f"{_scene_key(*args)}.pkl"
    if path.exists():
        try:
            spec = pickle.loads(path.read_bytes())
            if isinstance(spec, EpisodeSpec):
                return spec
        except Exception:  # noqa: BLE001 - a damaged entry is regenerated and rewritten
            pass
    spec = generate_scene(seed, n_objects, target, objects, high_clutter_share=high_clutter_share,
                          min_visibility=min_visibility, camera=camera, max_attempts=max_attempts)
    write_atomic(path, pickle.dumps(spec))
    return spec


def generate_scene(seed: int, n_objects: int = 15, target: str | None = None,
                   objects: list[ObjectSpec] | None = None, *, high_clutter_share: float = 0.5,
                   min_visibility: float = 0.05, camera: Camera | None = None,
                   reachable=None, max_attempts: int = 4) -> EpisodeSpec:
    """Build, settle and measure one episode; deterministic for (seed, arguments).

    Whether the episode wants a high-clutter target (visibility < 0.4) is stratified over the
    episode index (wants_high_clutter), and it picks the first eligible object of the wanted class
    in a seeded random order; when the scene has none it is dropped again (up to max_attempts)
    and finally the first scene's other-class target is taken (`wanted_high_clutter` vs
    `high_clutter` tells). A named `target` is kept whatever its visibility.
    """
    rng = np.random.default_rng(seed)
    camera = camera or default_camera(256)
    reachable = reachable if reachable is not None else _default_reachable()
    want_high = wants_high_clutter(seed, high_clutter_share)
    specs, target, absent = _choose_objects(rng, n_objects, target, objects)
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise ValueError("object names in an episode must be unique")
    last_err = "no eligible target"
    best: EpisodeSpec | None = None
    for _attempt in range(max_attempts):
        client = _client()
        try:
            scene.configure(client)
            scene.add_table(client)
            bodies = _drop(client, specs, rng)
            _, _, inst = camera.render(client)
            ids, counts = np.unique(inst, return_counts=True)
            scene_counts = {int(i): int(c) for i, c in zip(ids, counts, strict=True)}
            vis: dict[str, float] = {}
            if target is not None:
                order = [names.index(target)]
            else:
                order = list(rng.permutation(len(specs)))
            fallback: int | None = None
            chosen: int | None = None
            for i in order:
                b = bodies[i]
                if not _eligible(client, b, reachable):
                    continue
                v = measure_visibility(client, camera, bodies, b, scene_counts)
                vis[names[i]] = v
                if target is None and v < min_visibility:
                    continue
                if target is not None or (v < HIGH_CLUTTER_VISIBILITY) == want_high:
                    chosen = i
                    break
                if fallback is None:
                    fallback = i
            pick = chosen if chosen is not None else fallback
            if pick is None:
                last_err = f"no eligible target (target={target!r})"
                continue
            poses = [tuple(tuple(float(v) for v in part)
                           for part in pb.getBasePositionAndOrientation(b, physicsClientId=client))
                     for b in bodies]
            v = vis[names[pick]]
            result = EpisodeSpec(seed=seed, objects=specs, target=names[pick], poses=poses,  # type: ignore[arg-type]
                                 visibility=v, high_clutter=v < HIGH_CLUTTER_VISIBILITY, visibilities=vis,
                                 wanted_high_clutter=None if target is not None else want_high, absent=absent)
            if chosen is not None:
                return result
            best = best or result  # wrong clutter class: drop again, keep this one as the fallback
        finally:
            _release(client)
    if best is not None:
        return best
    raise RuntimeError(f"episode {seed}: {last_err} after {max_attempts} drops")
