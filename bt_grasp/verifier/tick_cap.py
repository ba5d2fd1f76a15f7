"""The tick cap in force for a tree (kept for older imports): bt_grasp/tick_budget.py holds it,
outside the verifier, so that running an episode imports no verifier code."""

from bt_grasp.tick_budget import DEFAULT_CAP, TickCap, episode_limits, structural_ticks, tick_cap

__all__ = ["DEFAULT_CAP", "TickCap", "episode_limits", "structural_ticks", "tick_cap"]
