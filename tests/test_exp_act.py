"""The "act" experiment end to end on a tiny run: requests per seed, measured ponder times in their
possible range, a figure, a report table and observations that carry their numbers."""
import dataclasses
import os

import pytest

from minishare.experiments import exp_act
from minishare.experiments.settings import QUICK


def test_act_experiment_runs_and_reports(tmp_path):
    pytest.importorskip("matplotlib")
    settings = dataclasses.replace(QUICK, seeds=(0, 1), act_steps=3)
    assert sorted(exp_act.requests(settings)) == ["act-universal-copy-s0", "act-universal-copy-s1"]
    result = exp_act.run(str(tmp_path), settings, progress=False)
    N = settings.act["num_hidden_layers"]
    for r in result["seeds"].values():
        for stack in ("encoder", "decoder"):
            assert 2 <= r["ponder"][stack]["mean"] <= N + 1
            assert all(2 <= t <= N + 1 for e in r["ponder"][stack]["examples"] for t in e["times"])
        for key in ("mean_at_eos", "mean_before_eos"):
            assert 2 <= r["ponder"]["decoder"][key] <= N + 1
    figs = exp_act.figures(result, str(tmp_path / "act"))
    assert all(os.path.exists(p) for _, paths in figs for p in paths)
    text = exp_act.report(result, figs)
    assert "| mean ponder time, encoder (source tokens) |" in text
    notes = exp_act.observations(result)
    enc = result["seeds"][0]["ponder"]["encoder"]["mean"]
    assert any(f"{(enc + result['seeds'][1]['ponder']['encoder']['mean']) / 2:.3f}" in n for n in notes)
