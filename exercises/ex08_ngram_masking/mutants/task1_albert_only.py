"""Ignores ``p`` and always returns ALBERT's harmonic p(n)."""
import numpy as np


def ngram_probabilities(max_n, p=None):
    weights = 1.0 / np.arange(1, max_n + 1)
    return weights / weights.sum()
