"""Live views of a run: the tree with each node's status, running leaves, the last event and the
budgets left, redrawn per tick — fed by the runner while it runs (`bt-grasp run --live`) or by a
trace file another process is writing (`bt-grasp watch`). Everything is built from trace records."""
