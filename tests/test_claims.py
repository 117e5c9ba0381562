"""The statistics of the reproduction and its ledger of claims: the paired t interval against
closed forms and a hand-worked example, Holm's step-down by hand, and the rule every sentence obeys
(no effect "shows" while its interval includes zero), checked on made-up ledgers that break it and
on the committed ledger and report of the book."""
import math
import os
import re

import pytest

from minishare.experiments import claims, stats

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIGURES = os.path.join(ROOT, "book", "figures")


@pytest.mark.parametrize("p", [0.6, 0.8, 0.9, 0.975, 0.995])
def test_t_quantile_against_closed_forms(p):
    # df = 1 is the Cauchy distribution: t = tan(π (p − 1/2)); df = 2: t = (2p − 1) / √(2 p (1 − p))
    assert stats.t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-10)
    assert stats.t_quantile(p, 2) == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-10)


def test_t_quantile_against_printed_tables():
    # Student's t table (two-sided 95%): 4.303 (df 2), 2.776 (4), 2.262 (9), 2.042 (30)
    for df, t in ((2, 4.303), (4, 2.776), (9, 2.262), (30, 2.042)):
        assert stats.t_quantile(0.975, df) == pytest.approx(t, abs=5e-4)


def test_paired_hand_worked():
    # d = a − b = 0.10, 0.05, 0.15, 0.05, 0.05: mean 0.08, sd √(0.008 / 4) = √0.002
    a, b = [2.10, 2.05, 2.20, 2.15, 2.00], [2.00, 2.00, 2.05, 2.10, 1.95]
    p = stats.paired(a, b)
    half = 2.776445 * math.sqrt(0.002) / math.sqrt(5)
    assert p["difference"] == pytest.approx(0.08)
    assert p["sd"] == pytest.approx(math.sqrt(0.002))
    assert p["interval"] == pytest.approx([0.08 - half, 0.08 + half], abs=1e-6)
    # t = 0.08 / (√0.002 / √5) = 4.0; two-sided p of t = 4 with 4 df is 0.016130 (tables)
    assert p["p"] == pytest.approx(0.016130, abs=2e-6)
    # the ranges [2.00, 2.20] and [1.95, 2.10] overlap, yet A is worse at every seed: paired, it shows
    assert stats.verdict(p, "lower") == "b better"


def test_one_seed_cannot_tell_and_unequal_lengths_are_refused():
    assert stats.verdict(stats.paired([1.0], [2.0]), "lower") == "cannot tell"
    with pytest.raises(ValueError, match="one value per seed"):
        stats.paired([1.0, 2.0], [1.0])


def test_holm_by_hand():
    # sorted 0.005 ≤ 0.05/4, 0.01 ≤ 0.05/3, 0.03 > 0.05/2: stop; 0.04 is not rejected either
    assert stats.holm([0.01, 0.04, 0.03, 0.005]) == [True, False, False, True]
    assert stats.holm([0.02, 0.03]) == [True, True]          # 0.02 ≤ 0.025, 0.03 ≤ 0.05
    assert stats.holm([0.03, 0.03]) == [False, False]


def _claim(a, b, primary=False, id="x", experiment="e"):
    return claims.compare(id, experiment, "A thing", "loss", "lower", "A", "B", list(range(len(a))), a, b,
                          primary=primary)


def test_holm_turns_a_marginal_primary_effect_into_cannot_tell():
    clear = _claim([1.0, 1.1, 1.2, 1.05, 1.15], [2.0, 2.1, 2.2, 2.05, 2.15], primary=True, id="clear")
    marginal = _claim([2.10, 2.05, 2.20, 2.15, 2.00], [2.00, 2.00, 2.05, 2.10, 1.95], primary=True, id="m")
    noise = [_claim([1.0, 2.0, 1.5, 1.2, 1.8], [1.9, 1.1, 1.4, 1.6, 1.3 + k / 10], primary=True, id=f"noise{k}")
             for k in range(3)]
    alone = claims.finish([marginal])[0]
    assert alone["verdict"] == "b better"                    # p = 0.016 alone
    done = {c["id"]: c for c in claims.finish([clear, marginal, *noise])}
    assert done["clear"]["verdict"] == "a better"            # p far below 0.05 / 5
    assert done["m"]["verdict"] == "cannot tell"             # second smallest: 0.016 > 0.05 / 4
    noise = done["noise0"]
    assert "not after Holm" in done["m"]["statement"]
    assert noise["verdict"] == "cannot tell" and "includes zero" in noise["statement"]


def test_a_model_that_does_not_beat_its_baseline_is_not_compared():
    c = _claim([6.20, 6.30, 6.25], [6.50, 6.60, 6.55])       # A far better than B, but both above 6.1
    done = claims.finish([c], [claims.baseline("e", "loss", "unigram", 6.1)])[0]
    assert done["verdict"] == "cannot tell" and "not compared" in done["statement"]
    done = claims.finish([c], [claims.baseline("e", "loss", "unigram", 7.0)])[0]
    assert done["verdict"] == "a better"


def test_a_gate_decides_on_another_metric_whether_the_arms_are_compared():
    """Figure 1's roughness has no baseline; the same models' MLM loss against the unigram does."""
    def rough(loss_a):
        return claims.compare("r", "e", "Roughness", "roughness", "lower", "A", "B", [0, 1, 2],
                              [0.1, 0.11, 0.12], [0.5, 0.52, 0.55],
                              gate={"metric": "mlm", "what": "held-out MLM loss", "better": "lower",
                                    "a": loss_a, "b": [3.0, 3.1, 3.2]})
    unigram = [claims.baseline("e", "mlm", "unigram", 3.75)]
    stuck = claims.finish([rough([3.74, 3.80, 3.77])], unigram)[0]   # A's mean 3.77: not below 3.75
    assert stuck["verdict"] == "cannot tell"
    assert "A does not beat the no-model baseline of held-out MLM loss (unigram, 3.750)" in stuck["statement"]
    assert claims.finish([rough([3.4, 3.5, 3.3])], unigram)[0]["verdict"] == "a better"


def test_problems_catches_a_verdict_that_its_interval_does_not_support():
    good = claims.finish([_claim([2.0, 2.1, 1.9], [2.05, 1.95, 2.0])])[0]
    assert good["verdict"] == "cannot tell" and claims.problems({"claims": [good]}) == []
    forged = {**good, "verdict": "a better", "statement": good["statement"].split(";")[0] + "; A is better."}
    assert any("includes zero" in p for p in claims.problems({"claims": [forged]}))
    typed = {**good, "statement": "A thing: A is better."}  # a statement that does not match its verdict
    assert claims.problems({"claims": [typed]})
    with pytest.raises(ValueError, match="contradicts"):
        claims.write(os.devnull, [forged], [])


# Words with which a sentence says that an effect shows. Every report sentence that uses one must be
# a ledger statement whose verdict is an effect (and so whose interval excludes zero).
EFFECT_WORDS = re.compile(r"\b(is better|is faster|ponders longer|in every seed|separated|significant)\b")


def report_sentences_that_claim_effects(report_text):
    return [line[2:] for line in report_text.splitlines() if line.startswith("- ") and EFFECT_WORDS.search(line)]


def check_report(report_text, ledger):
    """The problems of a report against its ledger: sentences that claim an effect the ledger does
    not hold as one, and the ledger's own contradictions."""
    effects = {c["statement"] for c in ledger["claims"] if c["verdict"] != "cannot tell"}
    out = [f"typed or unsupported: {s!r}" for s in report_sentences_that_claim_effects(report_text)
           if s not in effects]
    return out + claims.problems(ledger)


def test_check_report_fails_on_an_effect_whose_interval_includes_zero():
    c = claims.finish([_claim([2.0, 2.1, 1.9], [2.05, 1.95, 2.0])])[0]
    ledger = {"claims": [c], "baselines": []}
    assert check_report(f"- {c['statement']}\n", ledger) == []
    assert check_report("- A thing: A is better in every seed.\n", ledger)          # typed
    forged = {**c, "verdict": "a better", "statement": c["statement"].split(";")[0] + "; A is better."}
    assert check_report(f"- {forged['statement']}\n", {"claims": [forged], "baselines": []})


@pytest.mark.skipif(not os.path.exists(os.path.join(FIGURES, "claims.json")), reason="no committed ledger")
def test_the_committed_report_says_no_effect_its_ledger_does_not_support():
    ledger = claims.load(os.path.join(FIGURES, "claims.json"))
    with open(os.path.join(FIGURES, "report.md"), encoding="utf-8") as f:
        assert check_report(f.read(), ledger) == []
    for c in ledger["claims"]:
        for key in ("id", "experiment", "statement", "paper", "metric", "better", "arm_a", "arm_b", "seeds",
                    "a", "b", "difference", "interval", "method", "verdict", "primary"):
            assert key in c, (c.get("id"), key)
        assert len(c["a"]) == len(c["b"]) == len(c["seeds"])
    for b in ledger["baselines"]:
        assert set(b) == {"experiment", "metric", "name", "value"}
