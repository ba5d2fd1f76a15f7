"""`python -m bt_grasp.mcp_server` = `bt-grasp serve` (before/without the CLI wiring)."""

import sys

from bt_grasp.mcp_server.cli import main

sys.exit(main())
