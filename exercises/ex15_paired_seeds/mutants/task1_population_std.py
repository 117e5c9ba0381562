"""The population standard deviation (dividing by n, NumPy's default ddof=0) instead of the
sample's (n − 1): with 5 seeds the interval is √(4/5) ≈ 0.89 of its width."""


def paired_difference(a, b, confidence=0.95):
    d = _differences(a, b)
    n = len(d)
    if n < 2:
        raise ValueError("need at least 2 pairs")
    mean, std = float(d.mean()), float(d.std())
    half = t_quantile((1 + confidence) / 2, n - 1) * std / math.sqrt(n)
    return {"mean": mean, "std": std, "low": mean - half, "high": mean + half}
