"""`geometric` perception backend: RGB-D only (no annotations), so it also runs on real cameras.

Pipeline: pointmap in the base frame -> RANSAC table plane (horizontal prior) -> pixels 7 mm to
40 cm above it are foreground -> 4-connected components on the image grid where neighbouring
pixels are joined only if they are close in 3D (depth-discontinuity break) and similar in
chromaticity/brightness (colour break) -> small segments dropped -> segments cut at surface
folds and the pieces merged back where one catalogue object explains them (split_merge.py) ->
fragments cut apart by an object lying across them re-joined -> the basket fixture found and
given its floor (fixtures.py) -> colour, catalogue noun and size named per segment
(vocabulary.py), and for a partly hidden one also what it could be with its rest under a nearer
object (amodal.py) -> relations. Optional, off: depth-edge cuts and a face veto on merges
(normals.py). Ids are kept stable across frames by matching segments to the
previous survey (Hungarian assignment on 3D centroid distance < track_radius).

Simplified: touching same-colour objects with no fold between them (two boxes side by side at
one height) stay one segment; textured objects may split; shapes come from visible points only;
colour names assume roughly white light (no white balance).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.drivers.base import Observation

from .assemble import GroundingLocator, assemble, describe, heights_and_points
from .colour import name_colour, scene_brightness
from .features import ShapeMemo, best_catalogue_fit
from .fixtures import RECEPTACLE_NAME, add_floor, find_receptacle, outline
from .geometry import finite_rows, row_norms
from .lexicon import Vocabulary, default_vocabulary
from .normals import depth_edges, faces_apart, surface_normals
from .scene_graph import occlusion_counts
from .split_merge import MERGE_KEEP, merge_by_fit, split_at_valleys, valley_map
from .types import Measured, SceneGraph
from .vocabulary import catalogue_name


class GeometricPerceiver(GroundingLocator):
    """Perceiver from RGB-D alone: table removal, clustering, colour/size/shape naming."""

    name = "geometric"

    def __init__(self, min_height: float = 0.007, max_height: float = 0.40, jump: float = 0.012,
                 chroma_break: float = 0.10, min_area_m2: float = 2.0e-4, min_pixels: int = 20,
                 track_radius: float = 0.04, min_chroma_intensity: float = 40.0,
                 split_valleys: bool = True, depth_edges: bool = False, face_veto: bool = False,
                 vocabulary: Vocabulary | None = None) -> None:
        self.min_height = min_height  # foreground threshold above the table (depth noise margin)
        self.max_height = max_height  # ignore anything higher (arm, people) above the table
        self.jump = jump  # 3D distance that breaks a pixel link, plus 3 pixel footprints
        self.chroma_break = chroma_break  # L1 chromaticity difference that breaks a link
        self.min_area_m2 = min_area_m2  # segments with a smaller metric area are noise
        self.min_pixels = min_pixels
        self.track_radius = track_radius
        # Below this R+G+B sum chromaticity is too noisy to break links on (raise for noisy cameras).
        self.min_chroma_intensity = min_chroma_intensity
        self.split_valleys = split_valleys  # cut touching same-colour objects at surface folds
        # Also cut at inward surface steps and creases, and never merge back pieces showing two parallel
        # faces at two heights (normals.py); both off, for why see there.
        self.depth_edges = depth_edges
        self.face_veto = face_veto
        # The objects it can name (lexicon.py): categories, sizes, colours. None: the shipped default.
        self.vocabulary = vocabulary or default_vocabulary()
        self.last_scene: SceneGraph | None = None
        self._next_id = 1

    # -- segmentation -------------------------------------------------------------------------
    def segment(self, obs: Observation,
                memo: ShapeMemo | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(labels HxW 0 = background, pointmap, heights): instance segmentation from RGB-D.

        memo: filled with the geometry of the masks measured on the way (features.ShapeMemo).
        """
        from scipy.sparse import coo_matrix  # here, not at import: scipy loads slowly, only surveys use it
        from scipy.sparse.csgraph import connected_components

        P, heights, _ = heights_and_points(obs)
        h, w = heights.shape
        fg = np.isfinite(heights) & (heights > self.min_height) & (heights < self.max_height)
        idx = -np.ones((h, w), dtype=np.int64)
        n = int(fg.sum())
        idx[fg] = np.arange(n)
        if n == 0:
            return np.zeros((h, w), np.int32), P, heights
        f = float(obs.K[0, 0])
        flat_fg = np.flatnonzero(fg)
        Pf = P.reshape(-1, 3)
        rgbf = obs.rgb.reshape(-1, 3).astype(np.float32)
        depthf = obs.depth.reshape(-1).astype(np.float64)
        fgf = fg.reshape(-1)
        rows, cols = [], []
        for step, valid_a in ((1, (flat_fg % w) < w - 1), (w, flat_fg < (h - 1) * w)):
            a = flat_fg[valid_a]
            b = a + step
            keep = fgf[b]
            a, b = a[keep], b[keep]
            dist = row_norms(Pf[a] - Pf[b])
            tol = self.jump + 3.0 * np.minimum(depthf[a], depthf[b]) / f
            # Sums over the 3 channels written out: the values of sum(1), without numpy's slow
            # reduction over a short last axis.
            ra, rb = rgbf[a], rgbf[b]
            ia, ib = ra[:, 0] + ra[:, 1] + ra[:, 2] + 1.0, rb[:, 0] + rb[:, 1] + rb[:, 2] + 1.0
            e = np.abs(ra / ia[:, None] - rb / ib[:, None])
            dchrom = e[:, 0] + e[:, 1] + e[:, 2]
            bright = (ia > self.min_chroma_intensity) & (ib > self.min_chroma_intensity)
            link = (dist < tol) & ~(bright & (dchrom > self.chroma_break))
            link &= np.maximum(ia, ib) / np.minimum(ia, ib) < 4.0
            rows.append(idx.reshape(-1)[a[link]])
            cols.append(idx.reshape(-1)[b[link]])
        r, c = np.concatenate(rows), np.concatenate(cols)
        graph = coo_matrix((np.ones(len(r), dtype=np.int8), (r, c)), shape=(n, n)).tocsr()
        ncomp, comp = connected_components(graph, directed=False)
        # Metric area per component: each pixel covers (z/f)² m² facing the camera.
        pix_area = (depthf[flat_fg] / f) ** 2
        area = np.bincount(comp, weights=pix_area, minlength=ncomp)
        count = np.bincount(comp, minlength=ncomp)
        keep = (area >= self.min_area_m2) & (count >= self.min_pixels)
        new = np.zeros(ncomp, dtype=np.int32)
        new[keep] = np.arange(1, int(keep.sum()) + 1)
        labels = np.zeros((h, w), dtype=np.int32)
        labels[fg] = new[comp]
        memo = {} if memo is None else memo
        if self.split_valleys:
            labels = self._split_and_merge(labels, P, heights, obs, memo)
        return self._merge_fragments(labels, P, heights, obs, memo), P, heights

    def _split_and_merge(self, labels: np.ndarray, P: np.ndarray, heights: np.ndarray,
                         obs: Observation, memo: ShapeMemo) -> np.ndarray:
        """Cut segments along surface valleys, then merge pieces back where one catalogue object
        explains them together (split_merge.py)."""
        fg = labels > 0
        cuts = valley_map(heights, fg)
        if self.depth_edges:
            cuts |= depth_edges(P, fg)
        pieces = split_at_valleys(labels, fg, cuts, self.min_pixels)
        if pieces.max() == labels.max():
            return labels
        occ: dict[int, set[int]] = {}
        for (a, b), c in occlusion_counts(pieces, obs.depth).items():
            if c >= 3:
                occ.setdefault(a, set()).add(b)

        colours: dict[int, str] = {}

        def fit(mask: np.ndarray, win: tuple[slice, slice]) -> float:
            members = set(np.unique(pieces[win][mask]).tolist())
            occluded = any(occ.get(m, set()) - members for m in members)
            parent = int(np.bincount(labels[win][mask]).argmax())
            if parent not in colours:  # pieces of one segment share its colour (no colour break)
                # The parent lies inside its window: compare there, not over the whole image.
                colours[parent] = name_colour(obs.rgb[win][labels[win] == parent])[0]
            whole = np.zeros(labels.shape, dtype=bool)  # in image coordinates, to share the memo
            whole[win] = mask
            return best_catalogue_fit(whole, P, heights, occluded, colours[parent], win,
                                      vocab=self.vocabulary, memo=memo)

        apart = None
        if self.face_veto:
            nrm = surface_normals(P, fg)

            def apart(ma: np.ndarray, mb: np.ndarray, win: tuple[slice, slice]) -> bool:
                return faces_apart(ma, mb, nrm[win], P[win])

        return merge_by_fit(pieces, labels, fit, apart=apart)

    def _merge_fragments(self, labels: np.ndarray, P: np.ndarray, heights: np.ndarray,
                         obs: Observation, memo: ShapeMemo) -> np.ndarray:
        """Re-join pieces of one object that an object lying on it cut apart in the image.

        Two segments merge when they have the same chromaticity, the same top height (±6 mm),
        centroids < 12 cm apart (the longest catalogue object is 15 cm), a common occluder nearer
        the camera, and one catalogue object explains their union at least MERGE_KEEP × as well
        as the better fragment alone (the rule of split_merge.py). Without the last test two
        objects of one colour behind one box (a ball and a mug) were often joined.
        """
        from scipy import ndimage  # here, not at import: scipy loads slowly, only surveys use it

        n = int(labels.max())
        if n < 3:
            return labels
        flat = labels.reshape(-1)
        fgm = flat > 0
        lab = flat[fgm]
        cnt = np.bincount(lab, minlength=n + 1).astype(float)
        rgb = obs.rgb.reshape(-1, 3)[fgm].astype(float)  # the foreground only, then to float
        chrom = rgb / (rgb[:, :1] + rgb[:, 1:2] + rgb[:, 2:] + 1.0)  # integer sums: exact in any order
        mc = np.stack([np.bincount(lab, weights=chrom[:, k], minlength=n + 1) for k in range(3)], 1)
        mc /= np.maximum(cnt, 1)[:, None]  # type: ignore[misc]  # numpy's stub: bincount with weights is float
        pts = P.reshape(-1, 3)[fgm]
        ok = finite_rows(pts)
        cxy = np.stack([np.bincount(lab[ok], weights=pts[ok, k], minlength=n + 1) for k in range(2)], 1)
        cxy /= np.maximum(np.bincount(lab[ok], minlength=n + 1), 1)[:, None]  # type: ignore[misc]  # (as above)
        hv = np.nan_to_num(heights.reshape(-1)[fgm])
        top = np.asarray(ndimage.maximum(hv, lab, index=np.arange(n + 1)))
        occ: dict[int, set[int]] = {}
        for (a, b), c in occlusion_counts(labels, obs.depth).items():
            if c >= 3:
                occ.setdefault(a, set()).add(b)
        parent = list(range(n + 1))

        def find(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        ids = sorted(occ)
        pairs = [(a, b) for i, a in enumerate(ids) for b in ids[i + 1:]
                 if (occ[a] & occ[b]) and np.abs(mc[a] - mc[b]).sum() < 0.06 and abs(top[a] - top[b]) < 0.006
                 and np.linalg.norm(cxy[a] - cxy[b]) < 0.12]
        if not pairs:
            return labels
        fits: dict[frozenset[int], float] = {}

        def fit(group: frozenset[int]) -> float:  # fragments are occluded by definition
            if group not in fits:
                mask = np.isin(labels, list(group))
                box = ndimage.find_objects(mask.astype(np.int8))[0]
                fits[group] = best_catalogue_fit(mask, P, heights, True, name_colour(obs.rgb[mask])[0], box,
                                                 self.vocabulary, memo)
            return fits[group]

        members = {i: frozenset([i]) for i in range(n + 1)}
        for a, b in pairs:
            ra, rb = find(a), find(b)
            if ra != rb and fit(members[ra] | members[rb]) >= MERGE_KEEP * max(fit(members[ra]), fit(members[rb])):
                parent[rb] = ra
                members[ra] = members[ra] | members[rb]
        lut = np.array([find(i) for i in range(n + 1)], dtype=np.int32)
        return lut[labels]

    # -- id tracking --------------------------------------------------------------------------
    def _track(self, labels: np.ndarray, P: np.ndarray) -> np.ndarray:
        """Relabel segments with ids from the previous survey when they match it (stable ids)."""
        segs = [int(i) for i in np.flatnonzero(np.bincount(labels.ravel())) if i > 0]  # np.unique sorts
        if not segs:
            return labels
        flat = labels.reshape(-1)
        fg = np.flatnonzero(flat > 0)
        pts = P.reshape(-1, 3)[fg]
        okp = fg[finite_rows(pts)]  # labelled pixels with a point, in image order
        cnt = np.bincount(flat[okp], minlength=int(labels.max()) + 1).astype(float)
        sums = np.stack([np.bincount(flat[okp], weights=P.reshape(-1, 3)[okp, k], minlength=len(cnt))
                         for k in range(3)], axis=1)
        cents = (sums / np.maximum(cnt, 1)[:, None])[segs]
        lut = np.zeros(int(labels.max()) + 1, dtype=np.int32)
        assigned: dict[int, int] = {}
        prev = self.last_scene.objects if self.last_scene is not None else []
        if prev:
            pc = np.array([o.attributes.get("centroid_base", [np.nan] * 3) for o in prev], dtype=float)
            cost = np.linalg.norm(cents[:, None, :] - pc[None, :, :], axis=-1)
            cost = np.where(np.isfinite(cost), cost, 1e3)
            from scipy.optimize import linear_sum_assignment  # here: slow import, needed on a re-survey only

            ri, ci = linear_sum_assignment(cost)
            for i, j in zip(ri, ci, strict=True):
                if cost[i, j] < self.track_radius:
                    assigned[segs[i]] = prev[j].id
        for s in segs:
            if s not in assigned:
                assigned[s] = self._next_id
                self._next_id += 1
            else:
                self._next_id = max(self._next_id, assigned[s] + 1)
            lut[s] = assigned[s]
        return lut[labels]

    # -- Perceiver ----------------------------------------------------------------------------
    def survey(self, obs: Observation) -> SceneGraph:
        """Segment, name and relate the objects in one RGB-D frame (annotations are ignored)."""
        memo: ShapeMemo = {}
        labels, P, heights = self.segment(obs, memo)
        labels = self._track(labels, P)
        d = obs.depth[obs.depth > 0]
        rid = find_receptacle(labels, P, float(np.max(d)) / float(obs.K[0, 0]) if d.size else 0.0)
        inside = outline(labels, rid) if rid else np.zeros(labels.shape, dtype=bool)
        if rid:
            labels = add_floor(labels, rid, inside, heights, self.min_height)
        h, w = labels.shape

        def namer(oid: int, meas: Measured) -> tuple[str, str, dict[str, Any]]:
            if oid == rid:  # the fixture: named as the tree knows it, never a catalogue object
                attrs = {"source": "geometric", "category": RECEPTACLE_NAME, "fixture": True, "name_scores": {}}
                return RECEPTACLE_NAME, describe(RECEPTACLE_NAME, {**meas.attributes(), **attrs}), attrs
            name = catalogue_name(meas.colour, meas.category, meas.size, self.vocabulary)
            attrs = {"source": "geometric"}
            u, v = meas.point2d
            if inside[int(round(v * (h - 1))), int(round(u * (w - 1)))]:
                attrs["in_receptacle"] = RECEPTACLE_NAME
            return name, describe(name, meas.attributes()), attrs

        light = scene_brightness(obs.rgb[(labels == rid) & (heights < self.min_height)]) if rid else 1.0
        scene = assemble(obs, labels, P, heights, namer, min_pixels=self.min_pixels, brightness=light,
                         amodal=True, vocab=self.vocabulary, memo=memo)
        self.last_scene = scene
        return scene

