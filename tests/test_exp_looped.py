"""The "looped" experiment end to end on a tiny run: accuracies in [0, 1] per depth and r, the
library's counts in the result (parameters equal for the looped model and the same-parameters
arm, MACs equal for the looped model at r̄ and the same-compute arm), a figure, a report, and a
ledger whose statements agree with their numbers."""
import dataclasses
import json
import os

import pytest

from minishare.experiments import claims as ledger, exp_looped, reproduce
from minishare.experiments.settings import QUICK


def test_looped_experiment_runs_and_reports(tmp_path):
    pytest.importorskip("matplotlib")
    settings = dataclasses.replace(QUICK, looped_steps=3)
    result = json.loads(json.dumps(exp_looped.run(str(tmp_path), settings, progress=False)))
    D, R = settings.looped_test_depth, settings.looped_max_iterations
    for s in result["seeds"].values():
        assert len(s["looped"]) == R and all(len(a) == D + 1 and all(0 <= x <= 1 for x in a) for a in s["looped"])
        assert len(s[exp_looped.ARMS[1]]) == D + 1
    sizes, r_mean = result["sizes"], settings.looped_iterations[0]
    assert sizes["looped"]["parameters"] == sizes[exp_looped.ARMS[1]]["parameters"] < sizes[exp_looped.ARMS[2]]["parameters"]
    assert sizes["looped"]["macs_per_token"][r_mean - 1] == sizes[exp_looped.ARMS[2]]["macs_per_token"]
    assert sizes["looped"]["macs_per_token"][0] == sizes[exp_looped.ARMS[1]]["macs_per_token"]
    figs = exp_looped.figures(result, str(tmp_path / "looped"))
    assert all(os.path.exists(p) for _, paths in figs for p in paths)
    assert "| not-shared, same compute |" in exp_looped.report(result, figs)
    found = reproduce.ledger_of(exp_looped.NAME, result, settings)
    assert len(found["claims"]) == 4 and not ledger.problems(found)
    assert found["baselines"][0]["value"] == pytest.approx(1 / settings.looped_forest["n_chains"])


def test_a_flat_curve_has_no_peak(monkeypatch):
    """Every r scoring 0.016 is no peak at r = 1: the reading says the curve is flat."""
    result = {"max_iterations": 3, "mean_iterations": 2, "seeds": {"0": None}}
    values = {1: 0.016, 2: 0.016, 3: 0.016}
    monkeypatch.setattr(exp_looped, "beyond_accuracy", lambda result, seed, arm, r=None: values[r])
    assert exp_looped.peak_reading(result, "0") == "flat at 0.016"
    values[2] = 0.5
    assert exp_looped.peak_reading(result, "0") == "r = 2 (0.500)"
