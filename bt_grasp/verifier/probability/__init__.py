"""`verify --rates`: how often a tree decides each way and what it costs on average, from outcome
rates over the symbolic search's run graph."""
