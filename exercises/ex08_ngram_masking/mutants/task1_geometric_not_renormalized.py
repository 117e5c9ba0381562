"""Takes SpanBERT's geometric p (1 − p)^(n−1) as it is, without renormalizing over the clipped
range 1..max_n: the probabilities then sum to less than one."""
import numpy as np


def ngram_probabilities(max_n, p=None):
    n = np.arange(1, max_n + 1)
    if p is None:
        return (1.0 / n) / (1.0 / n).sum()
    return p * (1.0 - p) ** (n - 1)
