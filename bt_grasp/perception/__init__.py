"""Perception: segmenters, scene graph, name grounding, grasp generation, push planning."""
