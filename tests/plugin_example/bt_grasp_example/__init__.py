"""Example bt_grasp plug-ins (see pyproject.toml for how each is registered)."""
