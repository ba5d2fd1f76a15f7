"""The seam between a search and the machine it drives: where an advance stops (Point), the stop
at a choice not yet made (AtChoice), and what the symbolic search asks of a machine.

Both machines (compiled/machine.py on the compiled tree, symbolic/machine.py on its model) answer
an advance with a Point, so that the searches (compiled/search.py, symbolic/explore.py) read
one kind of result whichever tree they explore.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol


class AtChoice(Exception):
    """The replay reached a choice not yet made: the tree stops there. `resume`: where the
    symbolic machine takes that tick up again (symbolic/machine.py: Resume); None on the
    compiled tree, which replays the tick from its start."""

    def __init__(self, node_id: str, alphabet: tuple[str, ...], key: tuple[Any, ...],
                 resume: Any = None) -> None:
        super().__init__(node_id)
        self.node_id, self.alphabet, self.key, self.resume = node_id, alphabet, key, resume


@dataclass
class Point:
    """Where an advance stopped: a choice, a tick boundary, an ending or a problem."""

    kind: str                          # "choice" | "tick" | "end" | "problem" (| "idle": symbolic)
    costs: dict[str, int]
    tick: int
    key: tuple[Any, ...] | None = None
    node_id: str = ""
    alphabet: tuple[str, ...] = ()
    # tick start (choice) or this boundary (tick): compiled/state.Snapshot on the compiled tree,
    # the symbolic machine's saved tuple on the model
    snap: Any = None
    script: list[int] = field(default_factory=list)
    text: str = ""                     # ending reason or problem
    path: list[str] = field(default_factory=list)
    # the model's search (symbolic/machine.py): ticks left per running call / timeout, and for an
    # idle tick the choices it made and the ticks each resource lost
    res: dict[int, tuple[int, int]] | None = None
    idle: tuple[Any, ...] | None = None
    # the model's search: unobserved calls that ran to their maximum since the last point
    # (leaf id, extra ticks)
    bumps: tuple[tuple[str, int], ...] = ()
    # the model's search: the counters here (symbolic/explore.py moves them along the edges)
    cnt: tuple[int, ...] = ()
    # the model's search, at a choice: where its tick can be resumed (symbolic/machine.Resume)
    resume: Any = None


class ReplayState:
    """Where a machine's replay stands, kept alike on both trees: the choices to replay (`script`,
    read from `pos`), the alphabet of the choice just asked (`pending`), and the counts and dive
    the searches (compiled/search.py, symbolic/explore.py) read and set."""

    def __init__(self) -> None:
        self.script: list[int] = []
        self.pos = 0
        self.pending: tuple[str, ...] = ()
        self.advances = 0
        self.work = 0  # advances plus the choices made in them: the search's budgets count it
        # With `stop_at` set, an advance goes on past a new choice (taking its first outcome)
        # unless stop_at(key) says the search knows that state; the choices passed are in `dive`.
        self.stop_at: Callable[[tuple[Any, ...]], bool] | None = None
        self.dive: list[Point] = []
        self.dive_keys: set[tuple[Any, ...]] = set()


class NodeIndex(Protocol):
    """A model's node numbering: node id -> number (symbolic/model.py: Model.index)."""

    @property
    def index(self) -> dict[str, int]: ...


class ExploredMachine(Protocol):
    """What the symbolic search (symbolic/explore.py) drives: a machine that starts, advances
    from a saved point, answers a choice, and with `stop_at` set dives past the choices it has
    not seen (leaving them in `dive`), counting its advances and work."""

    advances: int
    work: int
    dive: list[Point]
    stop_at: Callable[[tuple[Any, ...]], bool] | None

    @property
    def m(self) -> NodeIndex: ...

    def start(self) -> Point: ...

    def advance(self, snap: Any, script: list[int]) -> Point: ...

    def branch(self, choice: Point, answer: int) -> Point: ...
