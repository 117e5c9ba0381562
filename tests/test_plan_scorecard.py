"""The plan written before the run, and the scorecard read from it: the committed plan is sound
and the committed ledger follows it; reproduce refuses a ledger that does not; every outcome is
decided by hand-made claims here; every reversed or not-compared row carries a reason that was
written for its verdict; every experiment's "Against the paper" paragraph reaches a chapter."""
import copy
import json
import os
import re

import pytest

from minishare.experiments import claims, plan, scorecard

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIGURES = os.path.join(ROOT, "book", "figures")


def committed():
    written = plan.load(FIGURES)
    if written is None or not os.path.exists(os.path.join(FIGURES, "claims.json")):
        pytest.skip("no committed plan and ledger")
    return written, claims.load(os.path.join(FIGURES, "claims.json"))


def claim(id="x.a_vs_b", a=(1.0, 1.1, 1.2, 1.3), b=(2.0, 2.2, 2.1, 2.3), primary=True, seeds=(0, 1, 2, 3)):
    """A finished claim on a lower-is-better metric: with these values a is clearly better."""
    return claims.finish([claims.compare(id, "x", "Loss, A against B", "loss", "lower", "A", "B", list(seeds),
                                         list(a), list(b), primary=primary)])[0]


def a_plan(direction="a better", seeds=(0, 1, 2, 3), tuning=(100,)):
    return {"tuning_seeds": list(tuning), "experiments": {"x": {
        "evaluation_seeds": list(seeds), "tuned": [],
        "primary": [{"id": "x.a_vs_b", "arm_a": "A", "arm_b": "B", "metric": "loss", "better": "lower",
                     "paper_direction": direction, "paper": "A beats B (Someone, 2020)", "detectable": 0.1}]}}}


def test_the_committed_plan_is_sound_and_the_ledger_follows_it():
    written, ledger = committed()
    assert plan.problems(written) == []
    assert plan.disagreements(written, ledger["claims"]) == []
    assert len(plan.planned(written)) == sum(c["primary"] for c in ledger["claims"])


def test_the_plan_of_the_next_run_is_sound_and_tunes_on_tuning_seeds_only():
    """plan_next.json, written before the next full run, where there is one (between runs):
    tuning seeds apart from evaluation seeds, a setting tuned on other seeds says it is pending,
    and it plans every experiment the committed plan does."""
    nxt = plan.load(FIGURES, plan.NEXT)
    if nxt is None:
        pytest.skip("no next run planned: the committed plan is the latest")
    assert plan.problems(nxt) == []
    assert set(nxt["experiments"]) == set(plan.load(FIGURES)["experiments"])


def test_a_ledger_that_leaves_the_plan_is_named():
    p = a_plan()
    assert plan.disagreements(p, [claim()]) == []
    assert plan.disagreements(p, [claim(id="x.other")]) == [
        "x.other: a primary comparison the plan does not name",
        "x.a_vs_b: planned as primary, missing from the ledger (or not primary there)"]
    assert plan.disagreements(p, [claim(primary=False)]) == [
        "x.a_vs_b: planned as primary, missing from the ledger (or not primary there)"]
    assert plan.disagreements(p, [claim(seeds=(4, 5, 6, 7))]) == [
        "x.a_vs_b: seeds [4, 5, 6, 7] (planned [0, 1, 2, 3]; a seed left out by a gate must be named)"]
    fewer = claim(a=(1.0, 1.1, 1.2), b=(2.0, 2.2, 2.1), seeds=(0, 1, 2))
    assert plan.disagreements(p, [fewer]) == [
        "x.a_vs_b: seeds [0, 1, 2] (planned [0, 1, 2, 3]; a seed left out by a gate must be named)"]
    assert plan.disagreements(p, [{**fewer, "what": "Loss, A against B (seed 3 left out: B stayed on the plateau)"}]) == []
    moved = copy.deepcopy(p)
    moved["experiments"]["x"]["primary"][0]["arm_b"] = "C"
    assert plan.disagreements(moved, [claim()]) == ["x.a_vs_b: arm_b 'B' (planned 'C')"]
    with pytest.raises(ValueError, match="does not follow the plan"):
        plan.check(moved, [claim()])


def test_tuning_on_evaluation_seeds_must_say_so():
    assert plan.problems(a_plan(tuning=(3, 100))) == ["x: tuning seeds [3] are evaluation seeds"]
    p = a_plan()
    p["experiments"]["x"]["tuned"] = [{"setting": "lr", "grid": "1e-3, 3e-3", "seeds": [0], "status": "done"}]
    assert plan.problems(p) == ["x: lr was tuned on seeds [0], not the tuning seeds, and is not marked pending"]
    p["experiments"]["x"]["tuned"][0]["status"] = "pending: retune"
    assert plan.problems(p) == []


def test_each_outcome_from_hand_made_claims():
    better = claim()                                     # A − B about −0.95, interval below zero
    worse = claim(a=(2.0, 2.2, 2.1, 2.3), b=(1.0, 1.1, 1.2, 1.3))
    noise = claim(a=(1.0, 2.0, 1.0, 2.0), b=(2.0, 1.0, 2.0, 1.0))
    assert (better["verdict"], worse["verdict"], noise["verdict"]) == ("a better", "b better", "cannot tell")
    assert scorecard.outcome(better, "a better") == "reproduced"
    assert scorecard.outcome(worse, "a better") == "reversed"
    assert scorecard.outcome(noise, "a better") == "cannot tell"
    assert scorecard.outcome(better, None) == "no paper direction"
    stuck = claims.finish([claims.compare("x.a_vs_b", "x", "Loss, A against B", "loss", "lower", "A", "B",
                                          [0, 1, 2, 3], [1.0, 1.1, 1.2, 1.3], [2.0, 2.2, 2.1, 2.3], primary=True)],
                          [claims.baseline("x", "loss", "unigram", 1.5)])[0]
    assert scorecard.outcome(stuck, "a better") == "not compared"       # B does not beat the unigram


def test_what_cannot_tell_rules_out_is_its_own_interval():
    noise = claim(a=(1.0, 2.0, 1.0, 2.0), b=(2.0, 1.0, 2.0, 1.0))
    low, high = noise["interval"]
    sentence = scorecard.ruled_out(noise)
    numbers = [float(x) for x in re.findall(r"[-+]?\d+\.\d+", sentence)]
    assert numbers == [round(low, 3), round(high, 3), round(noise["detectable"], 3)]
    assert low < 0 < high


def test_a_reversed_row_needs_a_reason_written_for_its_verdict():
    ledger = {"claims": [claim(a=(2.0, 2.2, 2.1, 2.3), b=(1.0, 1.1, 1.2, 1.3))], "baselines": []}
    rows = scorecard.rows(a_plan(), ledger, {})
    assert [r["outcome"] for r in rows] == ["reversed"]
    assert scorecard.problems(rows, {}, ledger) == ["x.a_vs_b: reversed without a reason in explanations.json"]
    reason = {"x.a_vs_b": {"verdict": "b better", "why": "the design favours B"}}
    rows = scorecard.rows(a_plan(), ledger, reason)
    assert rows[0]["reason"] == "the design favours B" and scorecard.problems(rows, reason, ledger) == []
    stale = {"x.a_vs_b": {"verdict": "a better", "why": "written for another run"}}
    assert scorecard.problems(scorecard.rows(a_plan(), ledger, stale), stale, ledger)[-1] == \
        "x.a_vs_b: its reason was written for verdict 'a better', the ledger says 'b better'"


def test_the_committed_scorecard_gives_every_reversed_row_a_reason_in_its_chapter():
    written, ledger = committed()
    explanations = scorecard.load_explanations(FIGURES)
    rows = scorecard.rows(written, ledger, explanations)
    assert len(rows) == len(plan.planned(written))
    assert scorecard.problems(rows, explanations, ledger) == []
    chapters = "".join(open(os.path.join(ROOT, "book", "chapters", f), encoding="utf-8").read()
                       for f in os.listdir(os.path.join(ROOT, "book", "chapters")))
    for r in rows:
        if r["outcome"] in scorecard.NEEDS_REASON:
            assert f"_generated/claims/{r['experiment']}.md" in chapters, r["experiment"]
            assert r["reason"] in scorecard.against(r["experiment"], rows)


def test_reproduce_refuses_a_ledger_that_contradicts_the_plan(tmp_path):
    """The toy experiment (tests/toy_experiment.py) makes one primary claim; a plan that does not
    name it stops reproduce before the ledger is written, and one that names it lets it through."""
    pytest.importorskip("matplotlib")
    import toy_experiment
    from minishare.experiments import registry, reproduce
    planned_toy = {"tuning_seeds": [100], "experiments": {"toy": {"evaluation_seeds": [0, 1], "tuned": [], "primary": [
        {"id": "toy.two_vs_one", "arm_a": "two layers", "arm_b": "one layer", "metric": "eval_loss",
         "better": "lower", "paper_direction": None, "paper": "", "detectable": 1.0}]}}}
    unplanned = copy.deepcopy(planned_toy)
    unplanned["experiments"]["toy"]["primary"] = []
    registry.register(toy_experiment)
    try:
        (tmp_path / "plan.json").write_text(json.dumps(unplanned))
        with pytest.raises(ValueError, match="toy.two_vs_one: a primary comparison the plan does not name"):
            reproduce.run(str(tmp_path), quick=True, only=["toy"], progress=False)
        assert not (tmp_path / "claims.json").exists()
        (tmp_path / "plan.json").write_text(json.dumps(planned_toy))
        reproduce.run(str(tmp_path), quick=True, only=["toy"], progress=False)
        assert [c["id"] for c in claims.load(str(tmp_path / "claims.json"))["claims"]] == ["toy.two_vs_one"]
    finally:
        registry.unregister("toy")
