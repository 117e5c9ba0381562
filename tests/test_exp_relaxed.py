"""The "relaxed" experiment end to end on a tiny run: one trained run and two from scratch per
seed, counts that follow from the conversions (the recursive model and its from-scratch twins have
the same parameters, each rank adds the same amount), a figure, a report and its claims."""
import dataclasses
import os

import pytest

from minishare.experiments import claims as ledger, exp_relaxed
from minishare.experiments.settings import QUICK


def test_relaxed_experiment_runs_and_reports(tmp_path):
    pytest.importorskip("matplotlib")
    s = dict(QUICK.relaxed, steps=3, uptrain_steps=2, ranks=(1, 2), basis_ranks=(2, 16))
    settings = dataclasses.replace(QUICK, seeds=(0, 1), relaxed=s)
    assert sorted(exp_relaxed.requests(settings)) == sorted(
        f"relaxed-{kind}-s{seed}" for kind in ("teacher", "scratch-cycle", "scratch-shallow") for seed in (0, 1))
    result = exp_relaxed.run(str(tmp_path), settings, progress=False)
    arms = result["arms"]
    params = {name: a["params"] for name, a in arms.items()}
    recursive = params["recursive, converted"]
    assert params["recursive, uptrained"] == recursive
    assert params["Cycle M = 2, N = 4, from scratch"] == params["not-shared N = 2, from scratch"] == recursive
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
