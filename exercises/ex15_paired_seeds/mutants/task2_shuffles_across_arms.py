"""A permutation test that pools the 2n values and shuffles them into two arms, as for two
independent samples: the pairing is lost, the seed-to-seed variation enters the null
distribution, and p is far larger than the sign-flip test's."""


def permutation_test(a, b, seed=0, samples=10_000):
    _differences(a, b)
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n = len(a)
    if n == 0:
        raise ValueError("need at least one pair")
    pooled = np.concatenate([a, b])
    observed = abs(a.mean() - b.mean())
    rng = np.random.default_rng(seed)
    reach = 0
    for _ in range(samples):
        shuffled = rng.permutation(pooled)
        reach += abs(shuffled[:n].mean() - shuffled[n:].mean()) >= (1 - 1e-9) * observed
    return (1 + reach) / (1 + samples)
