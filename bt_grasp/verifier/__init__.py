"""The verifier: explicit run states, exhaustive search, compositional bounds and the report."""
