"""The Watchdog: gripper telemetry in, outcome label with confidence out."""
