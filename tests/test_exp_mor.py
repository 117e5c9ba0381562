"""The "mor" experiment end to end on a tiny run: one arm per fixed depth, ACT and MoR; accuracies
and passes in range, MoR's passes exactly those its capacities plan (Σ_r k_r / T, on every seed),
the fixed depths' exactly r; the library's counts in the result (one model, so parameters differ
only by the routers or the halting unit); a measured step time per arm; a figure, a report, and a
ledger whose statements agree with their numbers. And the arms train on forests of every depth of
``train_depths``, the MoR arm with the router α and auxiliary weight of the settings."""
import dataclasses
import json
import os

import pytest

from minishare.analysis import mor as costs
from minishare.data import PointerForest
from minishare.experiments import claims as ledger, exp_mor, reproduce
from minishare.experiments.settings import QUICK
from minishare.nn.mor import capacity_tokens


def test_mor_experiment_runs_and_reports(tmp_path):
    pytest.importorskip("matplotlib")
    settings = dataclasses.replace(QUICK, mor={**QUICK.mor, "steps": 3})
    result = json.loads(json.dumps(exp_mor.run(str(tmp_path), settings, progress=False)))
    n, depth = len(settings.mor["capacities"]), settings.mor["depth"]
    arms = [f"fixed, r = {r}" for r in range(1, n + 1)] + ["ACT", "MoR"]
    assert list(result["sizes"]) == arms
    T = result["tokens"]
    for s in result["seeds"].values():
        for arm in arms:
            assert 0 <= s[arm]["accuracy"] <= 1 and len(s[arm]["accuracy_by_depth"]) == depth + 1
            assert 1 <= s[arm]["passes"] <= n
        for r in range(1, n + 1):
            assert s[f"fixed, r = {r}"]["passes"] == r
        assert s["MoR"]["tokens_per_step"] == [float(k) for k in capacity_tokens(settings.mor["capacities"], T)]
        assert s["MoR"]["passes"] == pytest.approx(result["mor_mean_passes"])
        assert all(s[arm]["step_seconds"] > 0 for arm in arms)
    sizes = result["sizes"]
    H = settings.mor["model"]["hidden_size"]
    assert sizes["MoR"]["parameters"] - sizes["fixed, r = 1"]["parameters"] == n * (H + 1)      # a router per step
    assert sizes["ACT"]["parameters"] - sizes["fixed, r = 1"]["parameters"] == H + 1           # one halting unit
    assert sizes["fixed, r = 2"]["macs_per_token"] - sizes["fixed, r = 1"]["macs_per_token"] == \
        costs.pass_macs(H, settings.mor["model"]["intermediate_size"], T)
    figs = exp_mor.figures(result, str(tmp_path / "mor"))
    assert all(os.path.exists(p) for _, paths in figs for p in paths)
    assert "| MoR |" in exp_mor.report(result, figs)
    ratio = exp_mor.time_ratio(result)
    assert f"{ratio:.2f} times" in exp_mor.observations(result)[1]
    found = reproduce.ledger_of(exp_mor.NAME, result, settings)
    assert len(found["claims"]) == 5 and not ledger.problems(found)


def test_every_arm_trains_on_forests_of_every_training_depth(monkeypatch):
    """The fixed-depth line is drawn on the task the settings describe: the batches _train reads
    have the depths of ``train_depths``, every one of them and no other (a task built on the
    test depth alone would give one depth); MoR's configuration carries α and the auxiliary weight."""
    drawn = []

    class Recording(exp_mor.RoutedForestTask):
        def batch(self, index):
            out = super().batch(index)
            drawn.append(int(out["depths"].max()))
            return out
    monkeypatch.setattr(exp_mor, "RoutedForestTask", Recording)
    settings = dataclasses.replace(QUICK, mor={**QUICK.mor, "train_depths": (1, 3), "depth": 3, "steps": 24})
    forest = PointerForest(**settings.mor["forest"])
    arms = exp_mor.configs(settings)
    exp_mor._train(arms["fixed, r = 2"], forest, settings, 0, progress=False)
    assert set(drawn) == {1, 3}
    assert (arms["MoR"].router_alpha, arms["MoR"].router_aux_loss_weight) == \
        (settings.mor["router_alpha"], settings.mor["router_aux_weight"])
