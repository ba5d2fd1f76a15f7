"""Drivers: the only code that touches a robot (simulated or real)."""
