"""The Takase & Kiyono experiments ("takase", "lm") and "gradnorms" and "communication" as claims:
their no-model baselines against hand-worked numbers and independent computations, the counted
equal-compute budget against a hand count, the claims a result makes, and every report, claim and
baseline of the committed full results."""
import contextlib
import dataclasses
import json
import math
import os

import numpy
import pytest

from minishare.data import seq2seq
from minishare.analysis import count_lm
from minishare.experiments import (claims, exp_communication, exp_gradnorms, exp_lm, exp_takase, registry, reproduce,
                                   stats, takase_arms)
from minishare.experiments.experiment import key_matches
from minishare.run.build import make_task
from minishare.experiments.settings import FULL, QUICK
from minishare.models import TransformerConfig

FIGURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "book", "figures")


# --- no-model baselines ---------------------------------------------------------------------------
def test_count_models_by_hand():
    """Training stream 0 1 0 1 2 (V = 3, k = 0.1, so k V = 0.3 pseudo-counts per context).
    Unigram, add-one: (2, 2, 1) + 1 over 5 + 3 = (3, 3, 2) / 8. Bigram counts: 0→1 twice, 1→0 and
    1→2 once; contexts 0 and 1 twice each, 2 never. Window 0 1 2 scores 1 after 0 and 2 after 1;
    window 2 0 scores 0 after the unseen context 2, which falls back to the unigram exactly."""
    train = numpy.array([0, 1, 0, 1, 2])
    p1 = numpy.array([3, 3, 2]) / 8
    got = count_lm.count_models(train, numpy.array([[0, 1, 2]]), 3, k=0.1)
    p_1_after_0 = (2 + 0.3 * p1[1]) / (2 + 0.3)
    p_2_after_1 = (1 + 0.3 * p1[2]) / (2 + 0.3)
    assert got["bigram"] == pytest.approx(math.exp(-(math.log(p_1_after_0) + math.log(p_2_after_1)) / 2))
    assert got["unigram"] == pytest.approx(1 / math.sqrt(p1[1] * p1[2]))
    unseen = count_lm.count_models(train, numpy.array([[2, 0]]), 3, k=0.1)
    assert unseen["bigram"] == pytest.approx(1 / p1[0]) == pytest.approx(unseen["unigram"])


def test_count_models_match_dense_counts_on_the_lm_windows():
    """On the quick LM task's own streams, against a dense V × V count table built here; the
    held-out windows are the ones the LM's evaluation scores (``LanguageModelingTask``)."""
    s = QUICK
    task, V = make_task("lm", 0, s.lm_batch_size, s.lm_seq_len, corpus=s.lm_corpus, vocab_size=s.vocab_size)
    ids, windows = task.train_ids, task.eval_windows
    table = numpy.zeros((V, V))
    numpy.add.at(table, (ids[:-1], ids[1:]), 1)
    unigram = (numpy.bincount(ids, minlength=V) + 1) / (len(ids) + V)
    u, w = windows[:, :-1].ravel(), windows[:, 1:].ravel()
    kV = count_lm.ADD_K * V
    bigram = (table[u, w] + kV * unigram[w]) / (table[u].sum(axis=1) + kV)
    # every context's distribution sums to one
    assert numpy.allclose(((table + kV * unigram) / (table.sum(axis=1, keepdims=True) + kV)).sum(axis=1), 1)
    got = {b["name"].split()[0]: b["value"] for b in exp_lm.baselines(None, s)}
    assert got["bigram"] == pytest.approx(math.exp(-numpy.log(bigram).mean()))
    assert got["unigram"] == pytest.approx(math.exp(-numpy.log(unigram[w]).mean()))
    assert got["bigram"] < got["unigram"]


def test_rule_scores_by_hand():
    """Pairs (a b -> b a), (c -> c), (a b a -> a b a): copying is right for the last two; uniform
    letters at the right length cost ln 10 for each of 2 + 1 + 3 letters and nothing for the 3 end
    tokens: 6 ln 10 / 9."""
    pairs = [([3, 4], [4, 3]), ([5], [5]), ([3, 4, 3], [3, 4, 3])]
    copied, uniform = exp_takase.rule_scores(pairs, 10)
    assert copied == pytest.approx(2 / 3)
    assert uniform == pytest.approx(6 * math.log(10) / 9)


def test_trivial_rules_on_the_held_out_examples_of_each_seed():
    """The held-out examples of seed s are the held-out problems drawn with seed 10,000 + s
    (``Seq2SeqTask``): copying a reversal is right exactly for the palindromes, counted here on
    the ids."""
    task = seq2seq.get_task("reverse")
    palindromes, uniform = [], []
    for s in (0, 1):
        pairs = seq2seq.examples(task, 256, seed=10_000 + s, held_out=True)
        palindromes.append(sum(list(src) == list(src)[::-1] for src, _ in pairs) / 256)
        letters = sum(len(src) for src, _ in pairs)
        uniform.append(letters * math.log(10) / (letters + 256))
    rules = {metric: (name, value) for name, metric, value in exp_takase.trivial_rules("reverse", [0, 1])}
    assert rules["exact_match"] == ("copy the source", pytest.approx(sum(palindromes) / 2))
    assert rules["loss"][1] == pytest.approx(sum(uniform) / 2)
    assert 1.9 < rules["loss"][1] < 2.0            # the plateau the settings' pilots found (1.96)
    assert [m for _, m, _ in exp_takase.trivial_rules("copy", [0])] == ["loss"]   # copying is the task
    assert exp_takase.trivial_rules("scan", [0]) == []


def test_addition_rules_by_hand():
    """"no carries" sums each column mod 10; "the larger operand" is right when the other is 0."""
    task = seq2seq.get_task("addition")
    pairs = [(list("19+3"), list("22")),      # 1+0, 9+3: no carries says 12, larger says 19
             (list("120+0"), list("120")),    # no carries right, larger right
             (list("15+4"), list("19")),      # no carries right, larger wrong
             (list("95+5"), list("100"))]     # no carries says 90 (9+0, 5+5 -> 0), larger 95: both wrong
    assert task.baselines(pairs) == {"the larger operand": 1 / 4, "no carries": 2 / 4}
    # on the held-out examples of each seed, the experiment's rules are these, averaged
    rules = exp_takase.trivial_rules("addition", [0, 1])
    by_seed = [task.baselines([([task.vocab[i] for i in s], [task.vocab[i] for i in t])
                               for s, t in make_task("addition", seed, 1, 1)[0].eval_pairs]) for seed in (0, 1)]
    assert rules == [(rule, "exact_match", pytest.approx((by_seed[0][rule] + by_seed[1][rule]) / 2))
                     for rule in ("the larger operand", "no carries")]


# --- equal compute --------------------------------------------------------------------------------
def test_macs_per_token_by_hand():
    """H = 8, FFN 32, V = 10, T = 4: a self-attention 4·64 + 2·4·8 = 320, a layer 320 + 2·8·32 =
    832; the LM with 2 positions 2·832 + 8·10 = 1,744; the encoder-decoder adds 2 decoder
    positions of 832 + 320: 4,048."""
    config = TransformerConfig(vocab_size=10, hidden_size=8, num_attention_heads=2, intermediate_size=32,
                               num_hidden_layers=2)
    assert takase_arms.macs_per_token(config, True, 4) == 1744
    assert takase_arms.macs_per_token(config, False, 4) == 4048


def test_equal_compute_steps_by_hand():
    """At the same H a strategy with N = 4 costs 4·832 + 80 = 3,408 against Vanilla's 1,744:
    100 · 1,744 / 3,408 = 51.2 updates; sharing does not enter (Cycle costs what Sequence does)."""
    vs = takase_arms.variants("lm", 10, dict(hidden_size=8, num_attention_heads=2, intermediate_size=32), 2, "pre",
                             efficiency=False)
    steps = takase_arms.equal_compute_steps("lm", 10, vs, 100, 4)
    assert steps["vanilla"] == 100 and steps["sequence-n4"] == steps["cycle-n4"] == 51
    Hu = vs["universal"]["H"]
    universal = 2 * (4 * Hu * Hu + 2 * 4 * Hu + 2 * Hu * 4 * Hu) + Hu * 10      # N = 2 positions, FFN 4 H
    assert steps["universal"] == round(100 * 1744 / universal)


def test_equal_time_steps_by_hand():
    """S = 2,000; Vanilla 20 ms a step, Universal 25 ms, Cycle 50 ms: Universal gets
    2,000 · 20 / 25 = 1,600 updates, Cycle 2,000 · 20 / 50 = 800, Vanilla its 2,000; 30 ms
    rounds 1,333.3 down."""
    times = {"vanilla": 0.020, "universal": 0.025, "cycle-n4": 0.050, "sequence-n4": 0.030}
    assert takase_arms.equal_time_steps(2000, times) == {"vanilla": 2000, "universal": 1600, "cycle-n4": 800,
                                                         "sequence-n4": 1333}


def test_step_times_are_measured_once_and_kept(tmp_path, monkeypatch):
    """The first call times (in the worker pool, replaced here by one that runs in this process)
    and writes them to out; a second call with the same arguments reads them back untimed; other
    configurations are timed again; without out nothing is kept."""
    calls = []

    class Pool:
        def map(self, function, tasks):
            return [function(task) for task in tasks]
    monkeypatch.setattr(takase_arms.runs, "worker_pool", lambda n: contextlib.nullcontext(Pool()))
    monkeypatch.setattr(takase_arms, "step_times", lambda task, configs, *args: calls.append(configs) or
                        {k: 0.01 * (i + 1) for i, k in enumerate(configs)})
    configs = {"vanilla": {"hidden_size": 8}, "universal": {"hidden_size": 12}}
    first = takase_arms.kept_step_times(str(tmp_path), "x", "lm", configs, 4, 3)
    assert first == {"vanilla": 0.01, "universal": 0.02} and len(calls) == 1
    assert json.loads((tmp_path / "x_step_times.json").read_text())["seconds"] == first
    assert takase_arms.kept_step_times(str(tmp_path), "x", "lm", configs, 4, 3) == first and len(calls) == 1
    takase_arms.kept_step_times(str(tmp_path), "x", "lm", {"vanilla": {"hidden_size": 16}}, 4, 3)
    assert len(calls) == 2
    takase_arms.kept_step_times(None, "x", "lm", configs, 4, 3)
    assert len(calls) == 3


def _same_but_steps(a, b):
    return {**a, "steps": 0, "eval_every": 0} == {**b, "steps": 0, "eval_every": 0}


@pytest.mark.parametrize("settings", [QUICK, FULL])
def test_budgeted_runs_are_requested_on_their_own_schedules(settings):
    """Every equal-parameter method other than Vanilla gets runs of its own at equal
    multiply-accumulates and, given the measured times, at equal measured time: the same request
    as its S-update run but for the updates (and its evaluations, spread over them)."""
    plans = exp_takase.plan(settings)
    lrs = {norm: {key: {"lr": 0.001 * (1 + i)} for i, key in enumerate(vs)} for norm, (vs, _) in plans.items()}
    # made-up step times: Vanilla 10 ms, the others 13, 17, 19, 23 ms
    times = {norm: dict(zip(takase_arms.equal_keys(vs), (0.010, 0.013, 0.017, 0.019, 0.023)))
             for norm, (vs, _) in plans.items()}
    takase = exp_takase.comparison_requests(settings, lrs, times)
    extra = 0
    for norm, (vs, budgets) in plans.items():
        assert all(takase[exp_takase.run_name(norm, k, vs[k], s)]["lr"] == lrs[norm][k]["lr"]
                   for k in vs for s in settings.seeds)
        assert set(budgets) == {"equal_compute"}
        timed = {k: round(settings.takase_steps * 0.010 / t) for k, t in times[norm].items()}
        own = set()
        for budget in (budgets["equal_compute"], timed):
            assert set(budget) == {"vanilla", "universal"} | {k for k in vs if vs[k]["N"] == 2 * vs["vanilla"]["N"]}
            assert budget["vanilla"] == settings.takase_steps
            for key, steps in budget.items():
                if key == "vanilla":
                    continue
                own.add((key, steps))
                for seed in settings.seeds:
                    plain = takase[exp_takase.run_name(norm, key, vs[key], seed)]
                    assert plain["steps"] == settings.takase_steps       # the runs cached before are unchanged
                    run = takase[exp_takase.run_name(norm, key, vs[key], seed, steps)]
                    assert run["steps"] == steps < settings.takase_steps
                    assert run["eval_every"] == max(steps // settings.takase_evals, 1)
                    assert _same_but_steps(run, plain)
        extra += len(own)
        assert len(own) > 4           # the two budgets differ for some method here
    n = len(settings.seeds)
    assert len(takase) == n * (sum(len(vs) for vs, _ in plans.values()) + extra)
    assert all(name.endswith(f"-s{r['seed']}") for name, r in takase.items())


@pytest.mark.parametrize("settings", [QUICK, FULL])
def test_the_lm_asks_for_its_equal_time_runs_once_it_can_time_them(settings, monkeypatch):
    """Without a folder to keep its times in, the S-update runs and the equal multiply-accumulate
    ones; with one, the equal-time ones too, from the times measured (made up here)."""
    settings = dataclasses.replace(settings, lm_equal_compute=True)
    vs, budgets = exp_lm._plan(settings)
    first = exp_lm.requests(settings)
    n = len(settings.seeds)
    assert len(first) == n * (5 + 4)
    times = dict(zip(vs, (0.010, 0.013, 0.017, 0.019, 0.023)))
    monkeypatch.setattr(exp_lm, "timing", lambda out, settings: times)
    second = exp_lm.requests(settings, "out")
    for key, t in times.items():
        if key == "vanilla":
            continue
        steps = round(settings.lm_steps * 0.010 / t)
        for seed in settings.seeds:
            run = second[exp_lm._name(settings, key, vs[key], seed, steps)]
            assert run["steps"] == steps and _same_but_steps(run, first[exp_lm._name(settings, key, vs[key], seed)])
    assert set(first) < set(second)
    # settings that leave the budgeted runs out ask for the S-update runs alone, timed or not
    assert exp_lm.requests(dataclasses.replace(settings, lm_equal_compute=False), "out").keys() == \
        {name for name in first if "steps-" not in name}


# --- claims of a result ---------------------------------------------------------------------------
def _histories(steps):
    """Three seeds' histories, apart (identical seeds would draw bands of zero width)."""
    return [[{"step": s, "loss": (1 + seed / 10) / s, "eval_loss": (1 + seed / 10) / s} for s in range(1, steps + 1)]
            for seed in range(3)]


def _method(key, M, N, exact, losses=(0.1, 0.2, 0.3), compute=None, timed=None):
    name = {"vanilla": "Vanilla", "universal": "Universal"}.get(key) or \
        next(n for n, s in takase_arms.STRATEGIES if key.rsplit("-n", 1)[0] == s)
    r = {"method": name, "label": f"{name} (M={M}, N={N}, H=8)", "M": M, "N": N, "H": 8, "params": 100,
         "speed": 2 / N, "steps": 10, "histories": _histories(10),
         "loss": stats.spread(losses), "exact_match": stats.spread(exact)}
    if compute is not None:
        r["equal_compute"] = {"steps": compute, "loss": stats.spread(losses), "exact_match": stats.spread(exact),
                              "histories": _histories(compute)}
    if timed is not None:
        r["equal_time"] = {"steps": timed, "loss": stats.spread([x + 0.5 for x in losses]),
                           "exact_match": stats.spread(exact), "histories": _histories(timed)}
        r["step_time"] = 0.010 * 10 / timed
    return r


def _result(equal_compute=False):
    base = [1.0, 1.1, 1.2]
    methods = {"vanilla": _method("vanilla", 2, 2, base, compute=10 if equal_compute else None,
                                  timed=10 if equal_compute else None),
               "universal": _method("universal", 1, 2, [0.90, 1.15, 1.00], compute=4 if equal_compute else None,
                                    timed=8 if equal_compute else None)}
    for key, exact in (("sequence-n4", [0.70, 0.81, 0.89]), ("cycle-n4", [0.8, 1.3, 1.0]),
                       ("cycle-rev-n4", [1.0, 0.95, 0.5])):
        methods[key] = _method(key, 2, 4, exact, compute=5 if equal_compute else None,
                               timed=6 if equal_compute else None)
    for key in ("sequence-n6", "cycle-n6", "cycle-rev-n6"):
        methods[key] = _method(key, 2, 6, [0.95, 1.1, 1.0])
    return {"task": "reverse", "steps": 10, "seeds": [0, 1, 2], "n": 2, "settings": {"post": methods}}


def test_takase_claims_pair_by_seed_and_name_the_paper():
    """Held-out loss is primary, exact match secondary: every comparison twice, the loss ones first."""
    result = _result()
    result["settings"]["post"]["sequence-n4"]["loss"] = stats.spread([0.4, 0.5, 0.6])
    found = claims.finish(exp_takase.claims(result, [0, 1, 2]))
    by_id = {c["id"]: c for c in found}
    assert len(by_id) == len(found) == 2 * (3 + 1 + 3)
    pairs = ["sequence-n4_vs_vanilla", "cycle-n4_vs_vanilla", "cycle-rev-n4_vs_vanilla",
             "sequence-n6_vs_universal", "cycle-n6_vs_universal", "cycle-rev-n6_vs_universal"]
    assert [c["id"] for c in found if c["primary"]] == [f"takase.postln.{p}.loss" for p in pairs]
    assert {c["metric"] for c in found if c["primary"]} == {"loss"}
    assert all(not by_id[f"takase.postln.{p}"]["primary"] for p in pairs)          # exact match: secondary
    # loss 0.3 higher than Vanilla's in every seed: Vanilla better, past Holm's 6
    loss = by_id["takase.postln.sequence-n4_vs_vanilla.loss"]
    assert loss["better"] == "lower" and loss["difference"] == pytest.approx(0.30) and loss["verdict"] == "b better"
    seq = by_id["takase.postln.sequence-n4_vs_vanilla"]
    # exact match (higher is better), paired differences -0.30, -0.29, -0.31: lower in every seed; a
    # secondary comparison is decided by its own interval and labelled exploratory
    assert seq["metric"] == "exact_match" and seq["better"] == "higher"
    assert seq["difference"] == pytest.approx(-0.30) and seq["verdict"] == "b better"
    assert seq["statement"].startswith(claims.EXPLORATORY)
    assert seq["arm_a"] == "Sequence (M=2, N=4, H=8), Post-LN" and seq["arm_b"] == "Vanilla (M=2, N=2, H=8), Post-LN"
    assert "2104.06022" in seq["paper"] and "27.13" in seq["paper"] and "26.57" in seq["paper"]
    assert "27.25" in by_id["takase.postln.cycle-n6_vs_universal.loss"]["paper"]
    # Cycle's seeds straddle Vanilla's: the mean is lower, the paired interval includes zero
    assert by_id["takase.postln.cycle-n4_vs_vanilla"]["verdict"] == "cannot tell"
    assert by_id["takase.postln.universal_vs_vanilla.loss"]["primary"] is False
    assert claims.problems({"claims": found}) == []


def test_the_target_frequency_rule_is_a_cross_entropy_of_counts(monkeypatch):
    """Hand-worked: training targets hold token 3 three times and the end token (2) once, over a
    vocabulary of 4, add-one: p(3) = 4/8, p(2) = 2/8; the held-out target [3, end] scores their mean
    negative log."""
    class Task:
        eval_pairs = [([3], [3])]

        def batch(self, i):
            return {"tgt_out": numpy.array([[3, 3, 3, seq2seq.EOS_ID]])}
    monkeypatch.setattr(exp_takase, "make_task", lambda *args, **kwargs: (Task(), 4))
    monkeypatch.setattr(exp_takase.seq2seq, "collate", lambda pairs: {"tgt_out": numpy.array([[3, seq2seq.EOS_ID]])})
    assert seq2seq.EOS_ID == 2 and seq2seq.PAD_ID not in (2, 3)
    assert exp_takase.target_frequency_loss("addition", 0, batches=1) == pytest.approx(-(math.log(4 / 8) + math.log(2 / 8)) / 2)


def test_observations_compare_nothing_and_count_the_solved_seeds():
    notes = exp_takase.observations(_result())
    assert "Cycle (rev) (M=2, N=4, H=8) 2 of 3" in notes[0]      # 1.0 and 0.95 reach 0.9, 0.5 does not
    for note in notes:
        assert "better" not in note and "cannot tell" not in note and "separated" not in note
    assert takase_arms.solved(stats.spread([0.9, 0.89, 1.0])) == "2 of 3"


def test_budgeted_runs_are_reported_and_claimed():
    result = _result(equal_compute=True)
    text = exp_takase.report(result, [])
    assert "**Post-LN, equal multiply-accumulates**" in text and "| Universal | 1 | 2 | 8 | Post-LN | 4 |" in text
    assert "**Post-LN, equal measured time**" in text and "| Universal | 1 | 2 | 8 | Post-LN | 8 |" in text
    assert "S_k = 10 · t_Vanilla / t_k" in text and "S_k = 10 · C_Vanilla / C_k" in text
    # Universal trained 8 updates at Vanilla's time: its step took 10/8 of Vanilla's 10 ms
    assert "Vanilla 10.0 ms a step" in " ".join(exp_takase.observations(result))
    assert "Universal (M=1, N=2, H=8) 8 (12.5 ms)" in " ".join(exp_takase.observations(result))
    found = exp_takase.claims(result, [0, 1, 2])
    exact = [c["id"] for c in found if c["metric"] == "exact_match"]
    assert [i for i in exact if i.endswith(".equal_compute")] == [
        "takase.postln.universal_vs_vanilla.equal_compute", "takase.postln.sequence-n4_vs_vanilla.equal_compute",
        "takase.postln.cycle-n4_vs_vanilla.equal_compute", "takase.postln.cycle-rev-n4_vs_vanilla.equal_compute"]
    # at equal measured time: the strategies against Universal (primary on the loss), all against Vanilla
    timed = [f"takase.postln.{k}_vs_universal.equal_time" for k in ("sequence-n4", "cycle-n4", "cycle-rev-n4")]
    assert [i for i in exact if i.endswith(".equal_time")] == timed + [
        f"takase.postln.{k}_vs_vanilla.equal_time" for k in ("universal", "sequence-n4", "cycle-n4", "cycle-rev-n4")]
    primary = [c for c in found if c["primary"]]
    assert [c["id"] for c in primary if "equal_time" in c["id"]] == [i + ".loss" for i in timed]
    by_id = {c["id"]: c for c in found}
    assert by_id["takase.postln.cycle-n4_vs_universal.equal_time.loss"]["arm_b"] == \
        "Universal (M=1, N=2, H=8), Post-LN, at equal measured time"
    assert "equal measured time" in by_id["takase.postln.cycle-n4_vs_universal.equal_time.loss"]["what"]
    assert claims.problems({"claims": claims.finish(found)}) == []


def test_budgeted_runs_are_drawn(tmp_path):
    pytest.importorskip("matplotlib")
    result = _result(equal_compute=True)
    figs = exp_takase.figures(result, str(tmp_path))
    assert any(takase_arms.budget_caption("equal_compute") in caption for caption, _ in figs)
    assert all((tmp_path / f"takase_{at}_postln.png").exists() for at in ("equal_compute", "equal_time"))
    # each budget's axis ends every curve at Vanilla's 10 updates
    for at in takase_arms.BUDGETS:
        curves = takase_arms.by_budget(at)(result["settings"]["post"], "universal")
        assert curves[0][-1][takase_arms.BUDGETS[at][2]] == pytest.approx(10)


# --- the committed full results -------------------------------------------------------------------
MODULES = {"takase": exp_takase, "lm": exp_lm, "gradnorms": exp_gradnorms, "communication": exp_communication}


def _committed(name):
    path = os.path.join(FIGURES, name, "result.json")
    if not os.path.exists(path):
        pytest.skip(f"no committed {path}")
    with open(path) as f:
        saved = json.load(f)
    # a stale committed result fails test_display's check of every committed result; here it skips
    if not key_matches(saved["settings"], registry.get(name).settings(FULL), older_data=True):
        pytest.skip(f"{path} was made with other settings than FULL")
    return saved["result"]


@pytest.mark.parametrize("name", list(MODULES))
def test_committed_results_report_and_claim(name):
    module, result = MODULES[name], _committed(name)
    found = reproduce.ledger_of(name, result, FULL)
    assert claims.problems(found) == []
    assert found["claims"] and len({c["id"] for c in found["claims"]}) == len(found["claims"])
    assert module.report(result, [])
    for note in module.observations(result) if hasattr(module, "observations") else []:
        assert "separated" not in note and "cannot tell" not in note and "better" not in note
    if name == "takase":
        # per LN position: three strategies against Vanilla, three against Universal
        assert sum(c["primary"] for c in found["claims"]) == 6 * len(FULL.takase_norms)
        assert {c["metric"] for c in found["claims"] if c["primary"]} == {"loss"}
        assert {b["name"] for b in found["baselines"]} == {"the larger operand", "no carries", "target-token frequencies"}
        assert "Learning rates: each method's, picked from {0.0003, 0.001, 0.003, 0.01}" in module.report(result, [])
    if name == "lm":
        values = {b["name"].split()[0]: b["value"] for b in found["baselines"]}
        assert values["bigram"] < values["unigram"]
        assert [c["id"] for c in found["claims"] if c["primary"]] == [
            f"lm.preln.{k}_vs_vanilla" for k in ("sequence-n6", "cycle-n6", "cycle-rev-n6")]
    if name == "communication":
        assert all(c["method"].endswith("rounds, 95% interval") for c in found["claims"])


def test_each_method_gets_the_rate_of_its_lowest_tuning_loss_and_then_its_runs(monkeypatch):
    """The search's runs come first; once they are there, ``tuned_lrs`` takes each method's rate of
    lowest held-out loss at the tuning seed, and the comparison's runs follow at those rates, the
    equal-time ones from the measured step times."""
    settings = dataclasses.replace(QUICK, takase_lrs=(1e-3, 3e-3), takase_norms=("post",))
    tuning = exp_takase.tuning_requests(settings)
    vs = exp_takase.plan(settings)["post"][0]
    assert len(tuning) == len(vs) * 2
    assert {r["seed"] for r in tuning.values()} == {exp_takase.TUNING_SEED} and exp_takase.TUNING_SEED not in QUICK.seeds
    # a made-up search: Vanilla does best at 3e-3, every other method at 1e-3
    def loss(request):
        vanilla = request["overrides"]["sharing"] == "not-shared"
        return 0.5 if (request["lr"] == 3e-3) == vanilla else 0.9
    done = set()
    monkeypatch.setattr(exp_takase.runs, "is_cached", lambda out, name, request: name in done)
    monkeypatch.setattr(exp_takase, "cached_run", lambda out, name, progress, **request:
                        {"final": {"eval_loss": loss(request)}})
    # made-up times: every method but Vanilla 37/11 times as slow: 30 · 11 / 37 = 8.9, 9 updates
    times = {"post": {k: 0.011 if k == "vanilla" else 0.037 for k in vs}}
    monkeypatch.setattr(exp_takase, "timing", lambda out, settings: times)
    assert exp_takase.requests(settings, "out") == tuning          # the search first
    done.update(tuning)
    lrs = exp_takase.tuned_lrs("out", settings)["post"]
    assert lrs["vanilla"]["lr"] == 3e-3 and lrs["vanilla"]["losses"] == {"0.001": 0.9, "0.003": 0.5}
    assert all(lrs[k]["lr"] == 1e-3 for k in vs if k != "vanilla")
    assert all(lrs[k]["edge"] for k in vs)                          # on a grid of two every choice is an edge
    wanted = exp_takase.requests(settings, "out")
    comparison = {name: r for name, r in wanted.items() if name not in tuning}
    assert comparison == exp_takase.comparison_requests(settings, {"post": lrs}, times)
    assert {r["lr"] for name, r in comparison.items() if "-vanilla-" in name} == {3e-3}
    assert {r["lr"] for name, r in comparison.items() if "-vanilla-" not in name} == {1e-3}
    timed = {name: r for name, r in comparison.items() if r["steps"] == 9}
    assert settings.takase_steps == 30 and len(timed) == 4 * len(settings.seeds)
    assert {name.split("-m")[0] for name in timed} == {"takase-postln-universal", "takase-postln-sequence",
                                                       "takase-postln-cycle", "takase-postln-cycle-rev"}


def test_a_rate_inside_the_grid_is_no_edge(monkeypatch):
    """Made-up search on {1e-3, 3e-3, 1e-2}: Vanilla best at 3e-3 (inside), the others at 1e-2 (the edge)."""
    settings = dataclasses.replace(QUICK, takase_lrs=(1e-2, 1e-3, 3e-3), takase_norms=("post",))
    monkeypatch.setattr(exp_takase, "cached_run", lambda out, name, progress, **request: {"final": {"eval_loss": (
        {3e-3: 0.1, 1e-3: 0.5, 1e-2: 0.9} if request["overrides"]["sharing"] == "not-shared"
        else {3e-3: 0.5, 1e-3: 0.9, 1e-2: 0.1})[request["lr"]]}})
    lrs = exp_takase.tuned_lrs("out", settings)["post"]
    assert lrs["vanilla"] == {"lr": 3e-3, "edge": False, "losses": {"0.01": 0.9, "0.001": 0.5, "0.003": 0.1}}
    assert all(r["lr"] == 1e-2 and r["edge"] for k, r in lrs.items() if k != "vanilla")


@pytest.mark.parametrize("settings", [QUICK, FULL])
def test_the_estimate_charges_the_comparison_before_the_search_has_run(settings, monkeypatch):
    """Before the learning-rate search, ``later_requests`` stands in for the comparison's runs:
    charged at made-up step times, it costs what the real runs cost at those times (an equal-time
    run is given Vanilla's S updates' time, whatever its own steps), and it asks for nothing once
    the search is done."""
    plans = exp_takase.plan(settings)
    lrs = {norm: {key: {"lr": 0.002} for key in vs} for norm, (vs, _) in plans.items()}
    seconds = {}                  # made-up seconds a step of each model, keyed by its overrides
    for norm, (vs, _) in plans.items():
        for i, key in enumerate(vs):
            seconds[repr(sorted(vs[key]["overrides"].items()))] = 0.010 + 0.003 * i
    times = {norm: {k: seconds[repr(sorted(vs[k]["overrides"].items()))] for k in takase_arms.equal_keys(vs)}
             for norm, (vs, _) in plans.items()}

    def cost(requests):
        return sum(r["steps"] * seconds[repr(sorted(r["overrides"].items()))] for r in requests.values())

    real, standing_in = exp_takase.comparison_requests(settings, lrs, times), exp_takase.later_requests(settings)
    assert len(standing_in) == len(real)
    assert cost(standing_in) == pytest.approx(cost(real), rel=0.01)    # the equal-time steps are rounded
    monkeypatch.setattr(exp_takase, "tuning_done", lambda out, s: True)
    assert exp_takase.later_requests(settings, "out") == {}
