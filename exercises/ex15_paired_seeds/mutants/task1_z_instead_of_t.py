"""The normal quantile 1.96 instead of Student's t: right for many seeds, but with the usual 3 to
5 seeds t(0.975, 4) = 2.776 and the interval is 30% too narrow."""


def paired_difference(a, b, confidence=0.95):
    d = _differences(a, b)
    n = len(d)
    if n < 2:
        raise ValueError("need at least 2 pairs")
    mean, std = float(d.mean()), float(d.std(ddof=1))
    half = 1.959964 * std / math.sqrt(n)
    return {"mean": mean, "std": std, "low": mean - half, "high": mean + half}
