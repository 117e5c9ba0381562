"""The sampled p-value as the plain fraction of samples that reach T, hits / samples: it is 0
when no sample does, a p-value no permutation test can give (the observed signs are one of the
sign vectors; Phipson & Smyth, 2010)."""
_permutation_test = permutation_test


def permutation_test(a, b, seed=0, samples=10_000):
    d = _differences(a, b)
    if len(d) <= 16:
        return _permutation_test(a, b, seed, samples)
    observed = abs(float(d.sum()))
    signs = np.random.default_rng(seed).choice((1.0, -1.0), size=(samples, len(d)))
    return float((np.abs(signs @ d) >= (1 - 1e-9) * observed).mean())
