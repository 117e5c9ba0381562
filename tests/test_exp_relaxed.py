"""The "relaxed" experiment end to end on a tiny run: one trained run and three from scratch per
seed, counts that follow from the conversions (the recursive model and its from-scratch twins have
the same parameters, each rank adds the same amount), a figure, a report and its claims; and the
uptraining reads batches after the teacher's, never the teacher's own."""
import dataclasses
import os

import numpy as np
import pytest

from minishare.experiments import claims as ledger, exp_relaxed
from minishare.experiments.settings import QUICK
from minishare.models import DecoderLM, TransformerConfig
from minishare.models.recursive import to_recursive
from minishare.run.build import make_task
from minishare.sharing import Plan


def test_relaxed_experiment_runs_and_reports(tmp_path):
    pytest.importorskip("matplotlib")
    s = dict(QUICK.relaxed, steps=3, uptrain_steps=2, ranks=(1, 2), basis_ranks=(2, 16))
    settings = dataclasses.replace(QUICK, seeds=(0, 1), relaxed=s)
    assert sorted(exp_relaxed.requests(settings)) == sorted(
        f"relaxed-{kind}-s{seed}" for kind in ("teacher", "scratch-cycle-uptrain", "scratch-shallow-uptrain",
                                                "scratch-cycle-total") for seed in (0, 1))
    result = exp_relaxed.run(str(tmp_path), settings, progress=False)
    arms = result["arms"]
    params = {name: a["params"] for name, a in arms.items()}
    recursive = params["recursive, converted"]
    assert params["recursive, uptrained"] == recursive
    assert params["Cycle M = 2, N = 4, from scratch (uptraining budget)"] == recursive
    assert params["Cycle M = 2, N = 4, from scratch (teacher + uptraining budget)"] == recursive
    assert params["not-shared N = 2, from scratch (uptraining budget)"] == recursive
    H, I, N = s["model"]["hidden_size"], s["model"]["intermediate_size"], s["layers"]
    per_rank = N * (4 * 2 * H + 2 * (H + I))           # r (in + out) for 6 matrices, 4 positions
    assert params["relaxed r = 1, converted"] - recursive == per_rank
    assert params["relaxed r = 2, uptrained"] - recursive == 2 * per_rank
    assert params["not-shared, trained"] - recursive == (N - 2) * (4 * (H * H + H) + 2 * H * I + I + H + 4 * H)
    assert all(len(a["loss"]["values"]) == 2 for a in arms.values())
    figs = exp_relaxed.figures(result, str(tmp_path / "relaxed"))
    assert all(os.path.exists(p) for _, paths in figs for p in paths)
    assert "| recursive, uptrained |" in exp_relaxed.report(result, figs)
    found = ledger.finish(exp_relaxed.claims(result, settings.seeds), exp_relaxed.baselines(result, settings))
    assert [c["id"] for c in found if c["primary"]] == ["relaxed.relaxed_vs_recursive", "relaxed.uptrained_vs_scratch"]
    assert all(c["statement"] for c in found)
    assert {c["id"]: c["arm_b"] for c in found}["relaxed.uptrained_vs_scratch_total"] == \
        "Cycle M = 2, N = 4, from scratch (teacher + uptraining budget)"
    teacher = arms["not-shared, trained"]["loss"]["mean"]
    assert f"{teacher:.3f}" in exp_relaxed.observations(result)[0]


def test_the_uptraining_reads_the_batches_after_the_teachers():
    """The teacher trained on batches 0 .. steps − 1 of the task; the uptraining (its own Trainer,
    from step 0) must ask the task for steps .. steps + uptrain_steps − 1, and so read text other
    than the teacher's first batches."""
    s = dict(QUICK.relaxed, steps=7, uptrain_steps=3)
    task, vocab = make_task("lm", 0, s["batch_size"], s["seq_len"], corpus=QUICK.lm_corpus, vocab_size=QUICK.vocab_size)
    asked, own = [], task.batch
    task.batch = lambda index: asked.append(index) or own(index)
    teacher = DecoderLM(TransformerConfig(vocab_size=vocab, num_hidden_layers=s["layers"], norm_position="pre",
                                          max_position_embeddings=s["seq_len"], **s["model"]))
    exp_relaxed._uptrain(to_recursive(teacher, Plan.build("cycle", s["layers"], s["unique"])), task, s, 0)
    assert asked == [7, 8, 9]
    read = [own(i)["input_ids"] for i in asked]
    assert not any(np.array_equal(a, own(i)["input_ids"]) for a in read for i in range(s["uptrain_steps"]))
