"""Holm's thresholds alpha/m, alpha/(m − 1), ... applied to every sorted p-value, without
stopping at the first that fails: a later, larger p-value can pass its looser threshold and be
rejected, which the step-down forbids (its error guarantee rests on the stop)."""


def holm(p_values, alpha=0.05):
    if any(not 0 <= p <= 1 for p in p_values):
        raise ValueError("p-values must lie in [0, 1]")
    m = len(p_values)
    rejected = [False] * m
    for k, i in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        rejected[i] = p_values[i] <= alpha / (m - k)
    return rejected
