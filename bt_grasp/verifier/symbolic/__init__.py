"""The symbolic engine: the tree's model as flat tables, ticked as the Runner ticks the compiled
tree, searched with time left symbolic; its run graph gives the tick bound and the properties."""
