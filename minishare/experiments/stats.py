"""Numbers over seeds: the mean and spread of a measurement repeated with different seeds, and the
one rule the report uses before it says an effect shows.

A tiny model trained for minutes is noisy: two runs that differ only in the seed can differ by more
than two sharing strategies do. So every comparison in the report is made over several seeds, and
a sentence may say that A differs from B only when ``separated(a, b)``: the seed ranges
[min, max] of A and of B do not overlap (then the gap of the means is larger than either spread).
Otherwise the report says the run cannot tell.
"""
import math


def spread(values):
    """Mean and spread of one measurement over seeds.

    ``values``: the measurement of each seed (at least one finite number). Returns {"mean", "std",
    "min", "max", "n", "values"}, with the sample standard deviation (ddof = 1; 0 for one seed)."""
    values = [float(v) for v in values]
    if not values:
        raise ValueError("spread needs at least one value (one per seed)")
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"spread got a value that is not a finite number: {values}")
    n = len(values)
    mean = sum(values) / n
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return {"mean": mean, "std": std, "min": min(values), "max": max(values), "n": n, "values": values}


def separated(a_values, b_values):
    """True only when the seed ranges [min, max] of ``a_values`` and ``b_values`` do not overlap,
    the condition for a report sentence to say that A and B differ. Either argument may be a list
    of per-seed values or a ``spread`` dict."""
    a, b = _as_spread(a_values), _as_spread(b_values)
    return a["max"] < b["min"] or b["max"] < a["min"]


def fmt(s, digits=3):
    """A ``spread`` dict as text: "5.855 ± 0.012 (5.841–5.867)", i.e. mean ± std (min–max); one
    seed prints its value alone."""
    if s["n"] == 1:
        return f"{s['mean']:.{digits}f} (1 seed)"
    return f"{s['mean']:.{digits}f} ± {s['std']:.{digits}f} ({s['min']:.{digits}f}–{s['max']:.{digits}f})"


def _as_spread(values):
    return values if isinstance(values, dict) else spread(values)
