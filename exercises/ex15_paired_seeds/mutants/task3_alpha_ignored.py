"""The verdict always from the 95% interval, whatever alpha is asked: at alpha = 0.01 it calls
differences that the 99% interval cannot tell from 0."""


def verdict(a, b, better="lower", alpha=0.05):
    if better not in ("lower", "higher"):
        raise ValueError(f"better must be 'lower' or 'higher', got {better!r}")
    interval = paired_difference(a, b)
    if interval["high"] < 0:
        lower = "a"
    elif interval["low"] > 0:
        lower = "b"
    else:
        return "cannot tell"
    winner = lower if better == "lower" else {"a": "b", "b": "a"}[lower]
    return f"{winner} better"
