"""An interval that reaches 0 at an endpoint read as lying on one side of it (≤ 0, ≥ 0 instead of
< 0, > 0): two identical runs, whose interval is [0, 0], then give "a better", though an interval
that holds 0, endpoints included, cannot tell."""


def verdict(a, b, better="lower", alpha=0.05):
    if better not in ("lower", "higher"):
        raise ValueError(f"better must be 'lower' or 'higher', got {better!r}")
    interval = paired_difference(a, b, confidence=1 - alpha)
    if interval["high"] <= 0:
        lower = "a"
    elif interval["low"] >= 0:
        lower = "b"
    else:
        return "cannot tell"
    winner = lower if better == "lower" else {"a": "b", "b": "a"}[lower]
    return f"{winner} better"
