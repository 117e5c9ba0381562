"""The interval of the difference of the two means as if the samples were independent (Welch's
interval, with Welch–Satterthwaite's df): the same mean, but the seed-to-seed variation that
pairing cancels stays in the width, so the worked example's interval holds 0."""


def paired_difference(a, b, confidence=0.95):
    _differences(a, b)
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n = len(a)
    if n < 2:
        raise ValueError("need at least 2 pairs")
    va, vb = a.var(ddof=1) / n, b.var(ddof=1) / n
    df = max(1, round((va + vb) ** 2 / (va ** 2 / (n - 1) + vb ** 2 / (n - 1)))) if va + vb > 0 else n - 1
    mean = float(a.mean() - b.mean())
    half = t_quantile((1 + confidence) / 2, df) * math.sqrt(va + vb)
    d = a - b
    return {"mean": mean, "std": float(d.std(ddof=1)), "low": mean - half, "high": mean + half}
