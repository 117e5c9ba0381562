"""Cases of exercise 15: Student's t quantiles against closed forms and printed tables, paired
intervals and verdicts on a hand-worked pair of designs, exact sign-flip p-values counted here
with integers, and Holm's procedure against its adjusted p-values.

Each probe calls ``stats`` (the student's module), on inputs the grader draws (``given``) in the
random cases, and returns numbers and strings; the judges, run by the grader, check them against
what this file computes itself (the printed table's values stay with them)."""
import math
from fractions import Fraction

import numpy as np

from minishare.grader.cases import case, raises


# --------------------------------------------------------------------------- independent values
# Six-decimal quantiles t(p, df) of standard tables (the NIST/SEMATECH e-Handbook of Statistical
# Methods, Sec. 1.3.6.7.2, prints the same to three decimals). The closed forms (df = 1, 2, 4),
# the exact sign-flip count and Holm's adjusted p-values answer the tasks: they sit with the
# hidden cases, which the release leaves out.
T_TABLE = {(0.975, 3): 3.182446, (0.975, 4): 2.776445, (0.975, 5): 2.570582, (0.975, 9): 2.262157,
           (0.975, 10): 2.228139, (0.975, 29): 2.045230, (0.975, 30): 2.042272, (0.975, 40): 2.021075,
           (0.975, 100): 1.983972, (0.95, 10): 1.812461, (0.995, 4): 4.604095, (0.995, 5): 4.032143,
           (0.999, 20): 3.551808, (0.9, 7): 1.414924}


# The hand-worked pair: design A and design B over five seeds (held-out losses).
A = [2.10, 2.05, 2.20, 2.15, 2.00]
B = [2.00, 2.00, 2.05, 2.10, 1.95]
# d = A − B = [0.10, 0.05, 0.15, 0.05, 0.05]: mean 0.08; squared deviations 0.0004, 0.0009, 0.0049,
# 0.0009, 0.0009 sum to 0.008, s² = 0.008/4 = 0.002, s/√5 = 0.02; t(0.975, 4) = 2.776445.
HAND_MEAN, HAND_STD, HAND_SE = 0.08, math.sqrt(0.002), 0.02


# --------------------------------------------------------------------------- task 1
@case("ex15_task1")
def test_t_quantiles_of_the_tables(stats):
    return [stats.t_quantile(0.975, 4), stats.t_quantile(0.975, 1), stats.t_quantile(0.975, 2),
            stats.t_quantile(0.975, 10), stats.t_quantile(0.025, 4)]


@test_t_quantiles_of_the_tables.judge
def _(out, ref):
    expected = [2.776445, 12.706205, 4.302653, 2.228139, -2.776445]             # the printed tables
    for got, want, what in zip(out, expected, ["t(0.975, 4)", "t(0.975, 1)", "t(0.975, 2)",
                                               "t(0.975, 10)", "t(0.025, 4)"]):
        assert math.isclose(got, want, abs_tol=5e-7), f"{what}: {got!r}, expected {want}"


@case("ex15_task1")
def test_paired_interval_hand_worked(stats):
    return stats.paired_difference(A, B)


@test_paired_interval_hand_worked.judge
def _(out, ref):
    half = 2.776445 * HAND_SE
    for key, want in (("mean", HAND_MEAN), ("std", HAND_STD), ("low", HAND_MEAN - half), ("high", HAND_MEAN + half)):
        assert math.isclose(out[key], want, abs_tol=2e-7), f"{key}: {out[key]!r}, expected {want:.7f}"


# --------------------------------------------------------------------------- task 2
@case("ex15_task2")
def test_sign_flips_hand_worked(stats):
    return [stats.permutation_test(A, B), stats.permutation_test([3.0, 1.0, 5.0], [2.0, 3.0, 2.0])]


@test_sign_flips_hand_worked.judge
def _(out, ref):
    # A − B is positive at every seed: only "all +" and "all −" of the 32 sign vectors reach |Σd|
    assert math.isclose(out[0], 2 / 32, abs_tol=1e-12), f"{out[0]!r}, expected 2/32"
    # d = [1, −2, 3], |Σd| = 2; the sums ±1 ±2 ±3 are 6, 0, 4, −2, 2, −4, 0, −6: six reach 2
    assert math.isclose(out[1], 6 / 8, abs_tol=1e-12), f"{out[1]!r}, expected 6/8"


# --------------------------------------------------------------------------- task 3
@case("ex15_task3")
def test_verdict_hand_worked(stats):
    return [stats.verdict(A, B, better="lower"), stats.verdict(A, B, better="higher")]


@test_verdict_hand_worked.judge
def _(out, ref):
    # the 95% interval [0.0245, 0.1355] of A − B lies above 0: A's values are higher at every seed,
    # though the seed ranges [2.00, 2.20] and [1.95, 2.10] overlap
    assert out == ["b better", "a better"], out


@case("ex15_task3")
def test_holm_hand_worked(stats):
    return stats.holm([0.01, 0.04, 0.03], alpha=0.05)


@test_holm_hand_worked.judge
def _(out, ref):
    # sorted 0.01 ≤ 0.05/3: rejected; 0.03 > 0.05/2: kept, and the step-down stops (0.04 kept)
    assert out == [True, False, False], out


### BEGIN HIDDEN TESTS
def t_closed_form(p, df):
    """Quantiles of Student's t with a closed form: df = 1 (Cauchy), 2 and 4 (inverting
    A&S 26.7.4 by hand: a cubic for df = 4)."""
    sign = 1.0 if p >= 0.5 else -1.0
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    if df == 4:
        alpha = 4 * p * (1 - p)
        q = math.cos(math.acos(math.sqrt(alpha)) / 3) / math.sqrt(alpha)
        return sign * 2 * math.sqrt(q - 1)
    raise ValueError(df)


def t_reference(p, df):
    if df in (1, 2, 4) and (p, df) not in T_TABLE:
        return t_closed_form(p, df)
    return T_TABLE[(p, df)]


def exact_sign_flip_p(d):
    """The two-sided sign-flip p-value of integer differences ``d``, exactly: the number of sign
    vectors reaching each sum, by convolution (no floating point, no enumeration)."""
    counts = {0: 1}
    for value in d:
        following = {}
        for total, ways in counts.items():
            for signed in (value, -value):
                following[total + signed] = following.get(total + signed, 0) + ways
        counts = following
    observed = abs(sum(d))
    return Fraction(sum(w for total, w in counts.items() if abs(total) >= observed), 2 ** len(d))


def holm_reference(p_values, alpha):
    """Holm through its adjusted p-values: p̃_(k) = max over j ≤ k of min(1, (m − j + 1) p_(j));
    reject where p̃ ≤ alpha. The same decisions as the step-down, computed another way."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted, running = [0.0] * m, 0.0
    for j, i in enumerate(order):
        running = max(running, min(1.0, (m - j) * p_values[i]))
        adjusted[i] = running
    return [a <= alpha for a in adjusted]


@case("ex15_task1")
def test_t_quantiles_closed_forms_and_tables(stats, given):
    return {"closed": [stats.t_quantile(p, df) for p, df in given["closed"]],
            "table": [stats.t_quantile(p, df) for p, df in given["table"]],
            "median": stats.t_quantile(0.5, 7), "many df": stats.t_quantile(0.975, 1000)}


@test_t_quantiles_closed_forms_and_tables.given
def _(rng):
    closed = [[float(p), df] for df in (1, 2, 4) for p in rng.uniform(0.51, 0.999, size=6)]
    closed += [[1 - p, df] for p, df in closed[:6]]                  # below the median: −t
    return {"closed": closed, "table": [list(key) for key in T_TABLE]}    # the table's values stay here


@test_t_quantiles_closed_forms_and_tables.judge
def _(out, ref, given):
    for (p, df), got in zip(given["closed"], out["closed"]):
        want = t_closed_form(p, df)
        assert math.isclose(got, want, rel_tol=1e-8, abs_tol=1e-9), f"t({p}, {df}): {got!r}, closed form {want!r}"
    for (p, df), got in zip(given["table"], out["table"]):
        assert math.isclose(got, T_TABLE[(p, df)], abs_tol=5e-7), f"t({p}, {df}): {got!r}, table {T_TABLE[(p, df)]}"
    assert abs(out["median"]) <= 1e-9, out["median"]
    # df = 1000: between the normal's 1.959964 and t(0.975, 100) = 1.983972; tables give 1.962339
    assert math.isclose(out["many df"], 1.962339, abs_tol=5e-7), out["many df"]


@case("ex15_task1")
def test_t_quantile_refuses_what_has_none(stats):
    return [raises(ValueError, stats.t_quantile, 0.0, 4), raises(ValueError, stats.t_quantile, 1.0, 4),
            raises(ValueError, stats.t_quantile, 0.975, 0), raises(ValueError, stats.t_quantile, 0.975, 2.5)]


@test_t_quantile_refuses_what_has_none.judge
def _(out, ref):
    assert out == [True] * 4, f"t_quantile must refuse p = 0, p = 1, df = 0 and df = 2.5: {out}"


@case("ex15_task1")
def test_paired_intervals_on_random_seeds(stats, given):
    return [stats.paired_difference(a, b) for a, b in given]


@test_paired_intervals_on_random_seeds.given
def _(rng):
    pairs = []
    for n in (2, 3, 5, 10, 31, 41):
        b = rng.normal(2.0, 0.1, size=n)                             # the seed moves both designs
        pairs.append([(b + rng.normal(0.03, 0.02, size=n)).tolist(), b.tolist()])
    return pairs


@test_paired_intervals_on_random_seeds.judge
def _(out, ref, given):
    for got, (a, b) in zip(out, given):
        d = np.array(a) - np.array(b)
        n = len(d)
        t = t_reference(0.975, n - 1)
        mean, std = d.mean(), d.std(ddof=1)
        half = t * std / math.sqrt(n)
        for key, want in (("mean", mean), ("std", std), ("low", mean - half), ("high", mean + half)):
            assert math.isclose(got[key], want, rel_tol=1e-6, abs_tol=1e-7), f"n = {n}, {key}: {got[key]!r}, expected {want!r}"


@case("ex15_task1")
def test_paired_interval_at_99_and_refusals(stats):
    return {"99%": stats.paired_difference(A, B, confidence=0.99),
            "lengths": raises(ValueError, stats.paired_difference, [1.0, 2.0, 3.0], [1.0, 2.0]),
            "one pair": raises(ValueError, stats.paired_difference, [1.0], [2.0])}


@test_paired_interval_at_99_and_refusals.judge
def _(out, ref):
    half = 4.604095 * HAND_SE                                        # t(0.995, 4)
    assert math.isclose(out["99%"]["low"], HAND_MEAN - half, abs_tol=2e-7), out["99%"]
    assert math.isclose(out["99%"]["high"], HAND_MEAN + half, abs_tol=2e-7), out["99%"]
    assert out["lengths"] and out["one pair"], "unpaired lengths and a single pair must raise ValueError"


@case("ex15_task2")
def test_sign_flips_count_ties(stats):
    """Differences whose sums tie in exact arithmetic but not always in floating point."""
    b = [1.0, 1.5, 2.0, 2.5, 3.0]
    return [stats.permutation_test([x + y for x, y in zip(b, d)], b[:len(d)]) for d in
            ([0.3, -0.2, 0.1, 0.2, 0.7], [-0.1, 0.2, -0.05, -0.3, 0.05], [0.6, -0.4, 0.3, 0.25])]


@test_sign_flips_count_ties.judge
def _(out, ref):
    for got, d in zip(out, ([30, -20, 10, 20, 70], [-10, 20, -5, -30, 5], [60, -40, 30, 25])):
        want = exact_sign_flip_p(d)
        assert math.isclose(got, float(want), abs_tol=1e-12), f"d = {[v / 100 for v in d]}: {got!r}, exact {want}"


@case("ex15_task2")
def test_sign_flips_exact_for_up_to_16_pairs(stats, given):
    return [stats.permutation_test(list(b + d), list(b), seed=len(d)) for b, d in given]


def integer_pairs(rng, n, low, high):
    """b (n seeds' values, whole numbers as floats) and integer differences d in [low, high)."""
    return [rng.integers(100, 200, size=n).astype(float), rng.integers(low, high, size=n)]


@test_sign_flips_exact_for_up_to_16_pairs.given
def _(rng):
    return [integer_pairs(rng, n, -3, 6) for n in (1, 4, 9, 16)]


@test_sign_flips_exact_for_up_to_16_pairs.judge
def _(out, ref, given):
    for p, (_, d) in zip(out, given):
        want = exact_sign_flip_p([int(v) for v in d])
        assert math.isclose(p, float(want), abs_tol=1e-12), f"n = {len(d)}: {p!r}, exact {want}"


@case("ex15_task2")
def test_sign_flips_sampled_beyond_16_pairs(stats, given):
    b, d = given
    a = list(b + d)
    return {"p": stats.permutation_test(a, list(b), seed=5), "again": stats.permutation_test(a, list(b), seed=5),
            "extreme": stats.permutation_test(list(b + 1.0), list(b), seed=5, samples=2000)}


@test_sign_flips_sampled_beyond_16_pairs.given
def _(rng):
    return integer_pairs(rng, 20, -2, 4)


@test_sign_flips_sampled_beyond_16_pairs.judge
def _(out, ref, given):
    exact = float(exact_sign_flip_p([int(v) for v in given[1]]))
    spread = 5 * math.sqrt(exact * (1 - exact) / 10_000) + 2 / 10_001
    assert abs(out["p"] - exact) <= spread, f"{out['p']!r} from 10,000 samples; the exact p is {exact:.5f}"
    assert out["p"] == out["again"], "the same seed must give the same p-value"
    # every d_i = 1: the exact p is 2/2^20; sampled, it is (1 + hits) / 2001 and never 0
    assert 1 / 2001 - 1e-15 <= out["extreme"] <= 3 / 2001, f"{out['extreme']!r}: expected (1 + hits)/(1 + samples), about 1/2001"


@case("ex15_task3")
def test_verdicts_either_way_and_at_alpha(stats):
    return {"a lower": [stats.verdict(B, A, better="lower"), stats.verdict(B, A, better="higher")],
            "alpha 0.01": stats.verdict(A, B, better="lower", alpha=0.01),
            "no difference": stats.verdict([1.0, 2.0, 3.0], [1.1, 1.9, 3.05], better="higher"),
            "identical runs": [stats.verdict(A, A, better="lower"), stats.verdict(A, A, better="higher")],
            "unknown": raises(ValueError, stats.verdict, A, B, better="smaller")}


@test_verdicts_either_way_and_at_alpha.judge
def _(out, ref):
    assert out["a lower"] == ["a better", "b better"], out["a lower"]
    # the 99% interval 0.08 ± 4.604095 · 0.02 = [−0.012, 0.172] holds 0
    assert out["alpha 0.01"] == "cannot tell", out["alpha 0.01"]
    assert out["no difference"] == "cannot tell", out["no difference"]
    # d = 0 at every seed: the interval [0, 0] holds 0 (at both endpoints)
    assert out["identical runs"] == ["cannot tell"] * 2, out["identical runs"]
    assert out["unknown"] is True, "better='smaller' must raise ValueError"


@case("ex15_task3")
def test_holm_steps_down_and_keeps_the_order(stats):
    return {"stops": stats.holm([0.01, 0.03, 0.035]), "all": stats.holm([0.01, 0.02, 0.04]),
            "order": stats.holm([0.5, 0.001, 0.02, 0.04]), "none": stats.holm([]),
            "refuses": raises(ValueError, stats.holm, [0.2, 1.5])}


@test_holm_steps_down_and_keeps_the_order.judge
def _(out, ref):
    assert out["stops"] == [True, False, False], ("0.03 > 0.05/2 stops the step-down: 0.035 is kept", out["stops"])
    assert out["all"] == [True, True, True], ("0.01 ≤ 0.05/3, 0.02 ≤ 0.05/2, 0.04 ≤ 0.05", out["all"])
    assert out["order"] == [False, True, False, False], ("decisions in the order of the p-values given", out["order"])
    assert out["none"] == [] and out["refuses"] is True, out


@case("ex15_task3")
def test_holm_on_random_families(stats, given):
    return [stats.holm(p, alpha=0.05) for p in given]


@test_holm_on_random_families.given
def _(rng):
    return [(rng.uniform(0, 0.08, size=int(rng.integers(1, 9))) ** 1.5).tolist() for _ in range(300)]


@test_holm_on_random_families.judge
def _(out, ref, given):
    for p, rejected in zip(given, out):
        assert rejected == holm_reference(p, 0.05), (p, rejected, holm_reference(p, 0.05))
### END HIDDEN TESTS
