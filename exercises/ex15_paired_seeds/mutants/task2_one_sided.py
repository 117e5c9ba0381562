"""A one-sided p-value: it counts the sign vectors whose Σ s_i d_i is at least Σ d_i, not those
whose absolute value reaches |Σ d_i|, so it is about half the two-sided one (and near 1 when
the differences are negative)."""


def permutation_test(a, b, seed=0, samples=10_000):
    d = _differences(a, b)
    n = len(d)
    if n == 0:
        raise ValueError("need at least one pair")
    observed = float(d.sum())
    signs = (np.array(list(itertools.product((1.0, -1.0), repeat=n))) if n <= 16
             else np.random.default_rng(seed).choice((1.0, -1.0), size=(samples, n)))
    reach = (signs @ d >= observed - 1e-9 * abs(observed))
    return float(reach.mean()) if n <= 16 else (1 + int(reach.sum())) / (1 + samples)
