"""Deduplication by value: two tensors that hold equal numbers count as one, as if sharing were a
property of the values rather than of the object (two zero-initialized biases are not shared)."""
import numpy as np


def distinct(params):
    kept = []
    for p in params:
        if not any(q.shape == p.shape and np.array_equal(q.data, p.data) for q in kept):
            kept.append(p)
    return kept
