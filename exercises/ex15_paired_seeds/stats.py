"""Exercise 15: comparing two designs over the same seeds, the way the reproduction's runs pair up.

Design A and design B were each trained once per seed s = 0 .. n−1, by one protocol (exercise
14's: ``minishare.manual_seed(s)`` and ``Seq2SeqTask(..., seed=s)``), so the runs of seed s saw
the same initialization stream, the same batches in the same order and the same held-out examples.
``a[i]`` and ``b[i]`` are the two designs' measurements (a held-out loss, say) at the same seed.
Pairing uses that: the differences d_i = a_i − b_i cancel what the seed did to both runs.

    paired_difference(a, b)      task 1: the mean of d and its t interval (Student, 1908)
    permutation_test(a, b)       task 2: the exact sign-flip test of d (Fisher, 1935)
    verdict(a, b), holm(p)       task 3: what a report may say; Holm's (1979) step-down

A rule that says "A differs from B" only when the seed ranges do not overlap ignores the pairing.
The library's ``minishare.experiments.stats`` may not be used here, and SciPy is not a dependency
of minishare (the grader runs without it).
"""
import itertools
import math

import numpy as np


def t_quantile(p, df):
    """Task 1. The p-quantile of Student's t distribution with ``df`` degrees of freedom (an
    integer ≥ 1), for 0 < p < 1: the t with P(T ≤ t) = p. t_quantile(0.975, 4) = 2.776445.

    One way, exact for integer df: with θ = arctan(|t| / √df), A = P(|T| ≤ |t|) is
    (Abramowitz & Stegun, 1964, 26.7.3 and 26.7.4)
        df = 1:      A = 2θ/π
        df odd > 1:  A = (2/π) (θ + sin θ [cos θ + (2/3) cos³θ + (2·4)/(3·5) cos⁵θ + ...
                                            + (2·4···(df−3))/(3·5···(df−2)) cos^(df−2) θ])
        df even:     A = sin θ [1 + (1/2) cos²θ + (1·3)/(2·4) cos⁴θ + ...
                                + (1·3···(df−3))/(2·4···(df−2)) cos^(df−2) θ]
    so P(T ≤ t) = (1 + sign(t) A) / 2, increasing in t: invert it by bisection. Refuses (ValueError)
    p outside (0, 1) and df that is not an integer ≥ 1."""
    ### BEGIN SOLUTION task 1
    if not 0 < p < 1:
        raise ValueError(f"t_quantile: p must lie in (0, 1), got {p}")
    if int(df) != df or df < 1:
        raise ValueError(f"t_quantile: df must be an integer ≥ 1, got {df}")
    df = int(df)
    if p < 0.5:
        return -t_quantile(1 - p, df)
    low, high = 0.0, 1.0
    while _t_cdf(high, df) < p:              # bracket the quantile
        high *= 2
    for _ in range(200):                     # bisection: ~1e-15 relative after 60 halvings
        middle = (low + high) / 2
        if _t_cdf(middle, df) < p:
            low = middle
        else:
            high = middle
        if high - low <= 1e-15 * high:
            break
    return (low + high) / 2
    ### END SOLUTION


def _t_cdf(t, df):
    """P(T ≤ t) for Student's t with integer df (Abramowitz & Stegun 26.7.3-4); see t_quantile."""
    ### BEGIN SOLUTION task 1
    theta = math.atan(abs(t) / math.sqrt(df))
    cos2 = math.cos(theta) ** 2
    if df % 2:                               # odd: cos θ + (2/3) cos³θ + ...
        term, series = math.cos(theta), 0.0
        for k in range(1, (df - 1) // 2 + 1):
            series += term
            term *= cos2 * (2 * k) / (2 * k + 1)
        inside = 2 / math.pi * (theta + math.sin(theta) * series) if df > 1 else 2 * theta / math.pi
    else:                                    # even: 1 + (1/2) cos²θ + (1·3)/(2·4) cos⁴θ + ...
        term, series = 1.0, 0.0
        for k in range(1, df // 2 + 1):
            series += term
            term *= cos2 * (2 * k - 1) / (2 * k)
        inside = math.sin(theta) * series
    return 0.5 + math.copysign(inside, t) / 2
    ### END SOLUTION


def _differences(a, b):
    """d_i = a_i − b_i of two equally long lists of finite numbers (ValueError otherwise)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"a and b must be two lists of the same length, one value per seed: got {a.shape} and {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("a and b must hold finite numbers")
    return a - b


def paired_difference(a, b, confidence=0.95):
    """Task 1. The mean difference of A and B over paired seeds, with its t interval.

    ``a``, ``b``: one measurement per seed, a[i] and b[i] from the same seed (n ≥ 2 pairs).
    With d_i = a_i − b_i, the mean d̄, the sample standard deviation s (divided by n − 1), and
    t = t_quantile((1 + confidence) / 2, n − 1), returns
        {"mean": d̄, "std": s, "low": d̄ − t s/√n, "high": d̄ + t s/√n}.
    Refuses (ValueError) lists of different lengths (they do not pair), fewer than 2 pairs, and
    values that are not finite."""
    ### BEGIN SOLUTION task 1
    d = _differences(a, b)
    n = len(d)
    if n < 2:
        raise ValueError(f"paired_difference needs at least 2 pairs (one per seed), got {n}")
    mean = float(d.mean())
    std = math.sqrt(float(((d - mean) ** 2).sum()) / (n - 1))
    half = t_quantile((1 + confidence) / 2, n - 1) * std / math.sqrt(n)
    return {"mean": mean, "std": std, "low": mean - half, "high": mean + half}
    ### END SOLUTION


def permutation_test(a, b, seed=0, samples=10_000):
    """Task 2. Two-sided p-value of the sign-flip permutation test of the paired differences.

    If A and B do not differ, the sign of each d_i = a_i − b_i is as likely + as −, whatever the
    seed did to both runs. The statistic is T = |Σ d_i|; the p-value is the fraction of sign
    vectors s ∈ {−1, +1}^n whose |Σ s_i d_i| ≥ |T| (the observed signs count: p > 0).
      n ≤ 16: exact, over all 2^n sign vectors.
      n > 16: ``samples`` sign vectors drawn by ``numpy.random.default_rng(seed)``, and
              p = (1 + the number that reach T) / (1 + samples) (Phipson & Smyth, 2010).
    Count a tie as reaching T: compare |Σ s_i d_i| ≥ (1 − 1e-9) T, since sums of the same numbers
    in another order may differ in their last bits. Refuses (ValueError) lists of different
    lengths and empty ones."""
    ### BEGIN SOLUTION task 2
    d = _differences(a, b)
    n = len(d)
    if n == 0:
        raise ValueError("permutation_test needs at least one pair")
    observed = abs(float(d.sum()))
    if n <= 16:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))          # (2^n, n)
        return float((np.abs(signs @ d) >= (1 - 1e-9) * observed).mean())
    rng = np.random.default_rng(seed)
    signs = rng.choice((1.0, -1.0), size=(samples, n))                            # (samples, n)
    reach = int((np.abs(signs @ d) >= (1 - 1e-9) * observed).sum())
    return (1 + reach) / (1 + samples)
    ### END SOLUTION


def verdict(a, b, better="lower", alpha=0.05):
    """Task 3. What a report may say about A against B: "a better", "b better" or "cannot tell".

    From the (1 − alpha) t interval of paired_difference(a, b) (d = a − b): an interval entirely
    below 0 says A's values are lower, entirely above 0 that they are higher, and one that holds 0
    cannot tell. ``better`` is "lower" (a loss) or "higher" (an accuracy); anything else is a
    ValueError."""
    ### BEGIN SOLUTION task 3
    if better not in ("lower", "higher"):
        raise ValueError(f"better must be 'lower' or 'higher', got {better!r}")
    interval = paired_difference(a, b, confidence=1 - alpha)
    if interval["high"] < 0:
        lower = "a"
    elif interval["low"] > 0:
        lower = "b"
    else:
        return "cannot tell"
    winner = lower if better == "lower" else {"a": "b", "b": "a"}[lower]
    return f"{winner} better"
    ### END SOLUTION


def holm(p_values, alpha=0.05):
    """Task 3. Holm's step-down procedure (Holm, 1979): which of m hypotheses to reject so that
    the chance of any false rejection stays at most alpha.

    Sort the p-values, p_(1) ≤ ... ≤ p_(m); reject H_(k) while p_(k) ≤ alpha / (m − k + 1), and
    stop at the first that is not: it and every later one are kept. Returns a list of m bools,
    True = rejected, in the order of ``p_values``. Refuses (ValueError) a p-value outside [0, 1]."""
    ### BEGIN SOLUTION task 3
    if any(not 0 <= p <= 1 for p in p_values):
        raise ValueError(f"p-values must lie in [0, 1], got {list(p_values)}")
    m = len(p_values)
    rejected = [False] * m
    for k, i in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        if p_values[i] > alpha / (m - k):
            break
        rejected[i] = True
    return rejected
    ### END SOLUTION
