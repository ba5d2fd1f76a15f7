"""The compositional bounds: one summary per node from its children's, in time polynomial in the
tree size, each bound believed only with a witness run reaching it."""
