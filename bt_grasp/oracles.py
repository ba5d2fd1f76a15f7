"""Outcome oracles: answer leaf calls without a robot (tests, property tests, dry runs)."""

from __future__ import annotations

import random
from collections.abc import Iterable


class RandomOracle:
    """Uniformly random outcomes from each leaf's alphabet, reproducible from a seed."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.choices: list[tuple[str, str]] = []

    def choose(self, node_id: str, alphabet: tuple[str, ...]) -> str:
        outcome = self.rng.choice(alphabet)
        self.choices.append((node_id, outcome))
        return outcome


class ScriptedOracle:
    """Per-node scripts of outcomes, consumed in order; an exhausted or missing script gives
    `fallback` (when in the alphabet) or the alphabet's first outcome."""

    def __init__(self, script: dict[str, Iterable[str]], fallback: str | None = None) -> None:
        self.script = {k: list(v) for k, v in script.items()}
        self.fallback = fallback
        self.choices: list[tuple[str, str]] = []

    def choose(self, node_id: str, alphabet: tuple[str, ...]) -> str:
        queue = self.script.get(node_id)
        if queue:
            outcome = queue.pop(0)
            if outcome not in alphabet:
                raise ValueError(f"{node_id}: scripted outcome {outcome!r} not in {alphabet}")
        elif self.fallback in alphabet:
            outcome = self.fallback
        else:
            outcome = alphabet[0]
        self.choices.append((node_id, outcome))
        return outcome
