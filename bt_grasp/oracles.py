"""Outcome oracles: answer leaf calls without a robot (tests, property tests, dry runs)."""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterable, Mapping


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

    def __init__(self, script: Mapping[str, Iterable[str]], fallback: str | None = None) -> None:
        self.script = {k: deque(v) for k, v in script.items()}
        self.fallback = fallback
        self.choices: list[tuple[str, str]] = []

    def choose(self, node_id: str, alphabet: tuple[str, ...]) -> str:
        queue = self.script.get(node_id)
        if queue:
            outcome = queue.popleft()
            if outcome not in alphabet:
                raise ValueError(f"{node_id}: scripted outcome {outcome!r} not in {alphabet}")
        elif self.fallback in alphabet:
            outcome = self.fallback
        else:
            outcome = alphabet[0]
        self.choices.append((node_id, outcome))
        return outcome


class SequenceOracle:
    """Answers in the global order of a recorded run: `steps` once, then `cycle` forever.

    A verifier counterexample that loops is its steps up to the loop plus the loop's steps;
    repeating them reproduces the run until the tick cap. A node other than the one recorded
    asking means the replay diverged: that raises ValueError rather than guessing.
    """

    def __init__(self, steps: Iterable[tuple[str, str]], cycle: Iterable[tuple[str, str]] = ()) -> None:
        self.steps = list(steps)
        self.cycle = list(cycle)
        self.choices: list[tuple[str, str]] = []

    def choose(self, node_id: str, alphabet: tuple[str, ...]) -> str:
        i = len(self.choices)
        if i < len(self.steps):
            want = self.steps[i]
        elif self.cycle:
            want = self.cycle[(i - len(self.steps)) % len(self.cycle)]
        else:
            raise ValueError(f"{node_id}: asked after the recorded run ended")
        if want[0] != node_id or want[1] not in alphabet:
            raise ValueError(f"replay diverged at step {i + 1}: {node_id} asked, {want[0]} recorded")
        self.choices.append(want)
        return want[1]


def scripts_of(steps: Iterable[tuple[str, str]], repeat_last: int = 0) -> dict[str, list[str]]:
    """Per-node scripts (for ScriptedOracle) from a run's (node, outcome) steps in order: the call
    order follows from the outcomes, so per-node queues replay the same run. `repeat_last` extends
    each queue with that many copies of its last outcome (to keep a loop going)."""
    out: dict[str, list[str]] = {}
    for node, outcome in steps:
        out.setdefault(node, []).append(outcome)
    if repeat_last:
        for queue in out.values():
            queue.extend([queue[-1]] * repeat_last)
    return out


class PrefixOracle:
    """Follows a prefix of alternative indices, then takes each alphabet's first outcome; records
    every choice point, so a depth-first search can enumerate all outcome sequences once each."""

    def __init__(self, prefix: list[int]) -> None:
        self.prefix = prefix
        self.trail: list[tuple[str, tuple[str, ...], int]] = []

    def choose(self, node_id: str, alphabet: tuple[str, ...]) -> str:
        i = len(self.trail)
        idx = self.prefix[i] if i < len(self.prefix) else 0
        self.trail.append((node_id, alphabet, idx))
        return alphabet[idx]

    @property
    def choices(self) -> list[tuple[str, str]]:
        return [(n, alpha[i]) for n, alpha, i in self.trail]

    def next_prefix(self) -> list[int] | None:
        """The depth-first successor of this run's choices (None: this was the last run)."""
        for i in range(len(self.trail) - 1, -1, -1):
            _, alpha, idx = self.trail[i]
            if idx + 1 < len(alpha):
                return [t[2] for t in self.trail[:i]] + [idx + 1]
        return None
