"""`sim` perception backend: THE SIMULATOR'S ANNOTATOR (ground-truth instance ids), not vision.

It reads obs.annotations["instance"] (HxW body ids from the renderer's segmentation buffer) and
obs.annotations["objects"] ({body id: {name, colour, category, size, ...}}); everything else
(table plane, 3D points, relations) is computed from depth exactly as the geometric backend does.
It is the benchmark's upper bound on segmentation and naming; it cannot run on a real camera.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bt_grasp.drivers.base import Observation

from .assemble import GroundingLocator, assemble, describe, heights_and_points
from .lexicon import Vocabulary, default_vocabulary
from .types import Measured, SceneGraph


class SimPerceiver(GroundingLocator):
    """Perceiver over the simulator's instance annotations (labelled `sim` in every report)."""

    name = "sim"

    def __init__(self, min_pixels: int = 20, vocabulary: Vocabulary | None = None) -> None:
        self.min_pixels = min_pixels  # fewer visible pixels than this counts as hidden
        # The words grounding reads goal texts in (lexicon.py). None: the shipped default.
        self.vocabulary = vocabulary or default_vocabulary()
        self.last_scene: SceneGraph | None = None

    @staticmethod
    def _annotations(obs: Observation) -> tuple[np.ndarray, dict[int, dict[str, Any]]]:
        ann = obs.annotations or {}
        if "instance" not in ann or "objects" not in ann:
            raise ValueError("the sim perceiver needs obs.annotations['instance'] and ['objects'] "
                             "(simulator ground truth); use the geometric backend on real frames")
        objects = {int(k): dict(v) for k, v in ann["objects"].items()}
        return np.asarray(ann["instance"]), objects

    def survey(self, obs: Observation) -> SceneGraph:
        """Objects the annotator lists and the camera sees (≥ min_pixels), with relations."""
        inst, objects = self._annotations(obs)
        labels = np.where(np.isin(inst, list(objects)), inst, 0).astype(np.int32)
        P, heights, _ = heights_and_points(obs, exclude=labels > 0)

        def namer(oid: int, meas: Measured) -> tuple[str, str, dict[str, Any]]:
            info = objects[oid]
            name = str(info.get("name", f"object {oid}"))
            attrs: dict[str, Any] = {k: info[k] for k in ("colour", "category", "size") if k in info}
            attrs["source"] = "sim_annotator"
            # the catalogue name is the annotator's: no measured catalogue fit may overrule it
            # (grounding then matches the name exactly, as an upper bound on naming should)
            attrs["name_scores"] = {}
            return name, describe(name, {**meas.attributes(), **attrs}), attrs

        scene = assemble(obs, labels, P, heights, namer, min_pixels=self.min_pixels, vocab=self.vocabulary)
        self.last_scene = scene
        return scene

