"""A perceiver plug-in: the geometric (RGB-D) perceiver, counting the frames it surveys.

It stands for any perception of your own (a VLM, a segmenter): anything with a `name`,
`survey(obs) -> SceneGraph` and `locate(obs, text, scene) -> Located | None` (the Perceiver
protocol, bt_grasp.perception.types) can be registered under `bt_grasp.perceivers`.
"""

from __future__ import annotations

from typing import Any

from bt_grasp.perception.geometric import GeometricPerceiver


class CountingPerceiver:
    """Delegates to GeometricPerceiver; `surveys` counts the frames it was asked about."""

    name = "example_counting"

    def __init__(self, **options: Any) -> None:
        self.inner = GeometricPerceiver(**options)
        self.min_pixels = self.inner.min_pixels  # read by leaves that track objects
        self.surveys = 0

    def survey(self, obs: Any) -> Any:
        self.surveys += 1
        return self.inner.survey(obs)

    def locate(self, obs: Any, text: str, scene: Any = None) -> Any:
        return self.inner.locate(obs, text, scene)
