"""Leaves: perception, primitives, Watchdog evaluation, conditions and terminal decisions."""
