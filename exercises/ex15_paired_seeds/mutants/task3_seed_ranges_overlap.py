"""The report's rule of thumb, the seed ranges [min, max] of A and of B must not overlap, used as
the verdict: it ignores the pairing, so the worked example, where A is worse at every seed but
the ranges overlap, "cannot tell"."""


def verdict(a, b, better="lower", alpha=0.05):
    if better not in ("lower", "higher"):
        raise ValueError(f"better must be 'lower' or 'higher', got {better!r}")
    if max(a) < min(b):
        lower = "a"
    elif max(b) < min(a):
        lower = "b"
    else:
        return "cannot tell"
    winner = lower if better == "lower" else {"a": "b", "b": "a"}[lower]
    return f"{winner} better"
