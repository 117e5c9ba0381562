"""The 95% interval built with the 95th percentile, t(0.95, n − 1), instead of t(0.975, n − 1):
that is the one-sided bound; a two-sided interval leaves 2.5% out on each side."""


def paired_difference(a, b, confidence=0.95):
    d = _differences(a, b)
    n = len(d)
    if n < 2:
        raise ValueError("need at least 2 pairs")
    mean, std = float(d.mean()), float(d.std(ddof=1))
    half = t_quantile(confidence, n - 1) * std / math.sqrt(n)
    return {"mean": mean, "std": std, "low": mean - half, "high": mean + half}
