"""Examples that ship with bt_grasp: a node of your own (my_nodes.py) and a tree using it
(reach.yaml). `python -m bt_grasp.examples DEST` copies both into the folder DEST."""
