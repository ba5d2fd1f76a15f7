"""Benchmarks: object catalogue, episode generation, metrics, baselines and runners."""
