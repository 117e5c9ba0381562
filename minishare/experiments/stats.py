"""Numbers over seeds, and the one rule that turns them into a sentence.

A tiny model trained for minutes is noisy: two runs that differ only in the seed can differ by more
than two sharing strategies do. But the runs pair up. In every experiment a seed s fixes the data
order, the held-out sample and the initialization stream for every arm, so a lucky seed lowers both
arms' losses and an unlucky one raises both. The paired difference d_s = a_s − b_s cancels what the
seed did to both runs; what is left is the design. So a comparison is reported as

    d̄ = mean(d),   95% interval  d̄ ± t(0.975, n−1) · sd(d) / √n       (Student's paired t)

and an effect *shows* only where that interval excludes zero. When an experiment makes several
primary comparisons at once, their p-values go through Holm's step-down correction first (Holm,
1979), so that "one of five comparisons showed" is not luck five times over. Where a comparison
cannot tell, ``detectable`` says how large a difference the run could have seen.
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


def fmt(s, digits=3):
    """A ``spread`` dict as text: "5.855 ± 0.012 (5.841–5.867)", i.e. mean ± std (min–max); one
    seed prints its value alone."""
    if s["n"] == 1:
        return f"{s['mean']:.{digits}f} (1 seed)"
    return f"{s['mean']:.{digits}f} ± {s['std']:.{digits}f} ({s['min']:.{digits}f}–{s['max']:.{digits}f})"


# --- Student's t, from the regularized incomplete beta function --------------------------------------
def _incomplete_beta(x, a, b):
    """I_x(a, b), by the continued fraction of Numerical Recipes (2007, Sec. 6.4), evaluated with
    the modified Lentz method; the symmetry I_x(a, b) = 1 − I_{1−x}(b, a) keeps it convergent."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _incomplete_beta(1.0 - x, b, a)
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)) / a
    tiny, c, d = 1e-300, 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 500):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),               # even step
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):   # odd step
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return front * f


def t_sf2(t, df):
    """Two-sided tail ``P(|T| >= |t|)`` of Student's t with ``df`` > 0 degrees of freedom:
    ``I_x(df / 2, 1 / 2)`` at ``x = df / (df + t²)``."""
    return _incomplete_beta(df / (df + t * t), df / 2.0, 0.5)


def t_quantile(p, df):
    """The t with P(T ≤ t) = p (0.5 ≤ p < 1), found by bisection on ``t_sf2``."""
    if not 0.5 <= p < 1:
        raise ValueError(f"t_quantile needs 0.5 <= p < 1, got {p}")
    tail = 2 * (1 - p)
    low, high = 0.0, 1.0
    while t_sf2(high, df) > tail:
        high *= 2
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if t_sf2(middle, df) > tail else (low, middle)
        if high - low < 1e-13 * high:
            break
    return (low + high) / 2


# --- the paired comparison ----------------------------------------------------------------------------
CONFIDENCE = 0.95
POWER = 0.80          # of ``detectable``: the difference this run would have shown 4 times in 5


def paired(a, b, over="seeds"):
    """Design A against design B measured at the same seeds (``a[i]``, ``b[i]``: seed i; ``over``
    names what pairs them in the method's text, e.g. "rounds" of a timing).

    Returns {"n", "difference" (mean of a − b), "sd" (of the differences), "interval" (the 95%
    paired-t interval of the mean difference), "p" (two-sided), "detectable", "method"}.
    ``detectable`` is the smallest true difference that this many seeds with this spread would
    show with 80% power, (t(0.975) + t(0.80)) · sd / √n: below it, "cannot tell" is expected."""
    a, b = spread(a)["values"], spread(b)["values"]
    if len(a) != len(b):
        raise ValueError(f"paired needs one value per seed on both sides, got {len(a)} and {len(b)}")
    n = len(a)
    d = [x - y for x, y in zip(a, b)]                      # (n,) per-seed differences
    mean = sum(d) / n
    method = f"paired t over {n} {over}, {CONFIDENCE:.0%} interval"
    if n < 2:
        return {"n": n, "difference": mean, "sd": None, "interval": None, "p": 1.0, "detectable": None,
                "method": method}
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    se = sd / math.sqrt(n)
    half = t_quantile(0.5 + CONFIDENCE / 2, n - 1) * se
    p = 1.0 if se == 0 and mean == 0 else (0.0 if se == 0 else t_sf2(mean / se, n - 1))
    detectable = (t_quantile(0.5 + CONFIDENCE / 2, n - 1) + t_quantile(POWER, n - 1)) * se
    return {"n": n, "difference": mean, "sd": sd, "interval": [mean - half, mean + half], "p": p,
            "detectable": detectable, "method": method}


def excludes_zero(interval):
    return interval is not None and (interval[0] > 0 or interval[1] < 0)


def holm(p_values, alpha=1 - CONFIDENCE):
    """Holm's (1979) step-down: which of m comparisons made together may be called effects.
    Sorted p_(1) ≤ ... ≤ p_(m), reject while p_(k) ≤ alpha / (m − k + 1) and stop at the first that
    is not. Returns one bool per p-value, in the given order."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    reject = [False] * len(p_values)
    for k, i in enumerate(order):
        if p_values[i] > alpha / (len(p_values) - k):
            break
        reject[i] = True
    return reject


def verdict(comparison, better, shows=None):
    """"a better", "b better" or "cannot tell" for a ``paired`` result, where ``better`` says
    whether a "lower" or a "higher" value is the better one. ``shows``: a decision made outside (by
    ``holm``); by default the 95% interval decides. Nothing shows whose interval includes zero."""
    if better not in ("lower", "higher"):
        raise ValueError(f"better must be 'lower' or 'higher', got {better!r}")
    if shows is False or not excludes_zero(comparison["interval"]):
        return "cannot tell"
    a_lower = comparison["difference"] < 0
    return "a better" if a_lower == (better == "lower") else "b better"
