"""Pending injected faults: which ones apply to a primitive, and consuming the `once` ones."""

from __future__ import annotations

from bt_grasp.drivers.base import FAULT_KINDS, Fault


class FaultBook:
    def __init__(self) -> None:
        self._pending: list[Fault] = []

    def add(self, fault: Fault) -> None:
        if fault.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {fault.kind!r} (known: {', '.join(FAULT_KINDS)})")
        self._pending.append(fault)

    def clear(self) -> None:
        self._pending.clear()

    def peek(self, primitive: str) -> list[Fault]:
        return [f for f in self._pending if f.primitive in (None, primitive)]

    def take(self, primitive: str) -> list[Fault]:
        """Faults for this call; `once` faults are removed from the book."""
        hit = self.peek(primitive)
        self._pending = [f for f in self._pending if not (f.once and any(f is h for h in hit))]
        return hit


class InjectsFaults:
    """FaultInjectable (drivers/capabilities.py) for a driver keeping its pending faults in `faults`."""

    faults: FaultBook

    def inject(self, fault: Fault) -> None:
        self.faults.add(fault)

    def clear_faults(self) -> None:
        self.faults.clear()
