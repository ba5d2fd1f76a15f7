"""Mobile fetch-and-place on a simulated Stretch: the recovery-scenario suite and what it needs.

`scenarios` (layouts, instructions, tree variants, scoring) and its CLI (`cli`, `bt-grasp
scenarios`); `nav` (occupancy grid, A*, standoff poses); `som` (Set-of-Mark overlays, the
lexical category matcher); `target` (choosing and checking the target); `user` (the simulated
or terminal user of `ask`); `ground_truth` (scoring only, never seen by the tree).

This file imports nothing, so no submodule imports its package back.
"""
