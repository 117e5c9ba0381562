"""Figure 1's observations name what the mean over seeds hides: a seed that stayed on the unigram
plateau, and a fixed point reached only by such a seed. Checked on a hand-made result."""
import dataclasses
import json
import os

import pytest

from minishare.experiments import albert_arms, exp_layerwise
from minishare.experiments.settings import FULL


def _model(mlm_loss, unigram, l2_curves):
    """One model of a Figure 1 result: per-seed held-out losses and L2 curves (N = 3 layers, H = 4)."""
    norms = [[2.0, 2.0, 2.0, 2.0] for _ in l2_curves]                      # ‖h_l‖, l = 0..N
    side = {"norms": norms, "l2": l2_curves, "cosine_degrees": l2_curves}
    return {"E": 4, "sharing": "all-shared", "mlm_loss": mlm_loss, "unigram": unigram,
            "trained": side, "untrained": side}


def _result(**models):
    return {"H": 4, "N": 3, "steps": 10, "models": models}


def test_a_seed_left_on_the_plateau_is_named_although_the_mean_learned():
    # mean 3.0 against 4.0: learned; the second seed is 0.01 below its own unigram, inside LEARNED
    r = _result(shared=_model([2.0, 3.99], [4.0, 4.0], [[1.0, 0.5, 0.4], [1.0, 0.5, 0.4]]))
    assert exp_layerwise.learned(r["models"]["shared"])
    line = exp_layerwise.observations(r)[0]
    assert "it learned" in line and "1 of 2 seeds did not get" in line and "3.990 against its 4.000" in line


def test_no_seed_named_when_every_seed_learned():
    r = _result(shared=_model([2.0, 2.5], [4.0, 4.0], [[1.0, 0.5, 0.4], [1.0, 0.5, 0.4]]))
    assert "did not get" not in exp_layerwise.observations(r)[0]


def test_a_fixed_point_reached_only_by_a_seed_that_did_not_learn_is_called_the_plateau_s():
    # seed 2 collapses at layer 2 (0.005 < 1% of 1.0) and sits on the plateau; seed 1 learned, no collapse
    r = _result(shared=_model([2.0, 3.99], [4.0, 4.0], [[1.0, 0.5, 0.4], [1.0, 0.005, 0.001]]))
    line = _collapse_line(r)
    assert "none, layer 2" in line and "collapse is the plateau's" in line


def test_a_fixed_point_of_a_seed_that_learned_is_not_blamed_on_the_plateau():
    r = _result(shared=_model([2.0, 2.5], [4.0, 4.0], [[1.0, 0.5, 0.4], [1.0, 0.005, 0.001]]))
    line = _collapse_line(r)
    assert "layer 2" in line and "plateau" not in line


def _collapse_line(r):
    return next(n for n in exp_layerwise.observations(r) if "first layer whose L2" in n)


def test_turns_counts_the_changes_of_direction():
    assert exp_layerwise.turns([9.0, 5.0, 4.0, 3.0, 2.0]) == 0          # falls steadily (layer 1 left out)
    assert exp_layerwise.turns([9.0, 1.0, 2.0, 1.0, 2.0]) == 1          # up, down, up: turns at both steps
    assert exp_layerwise.turns([9.0, 1.0, 2.0, 3.0, 2.0]) == 0.5        # up, up, down: one turn of two


def test_relative_roughness_divides_by_the_curve_s_level():
    # steps after layer 1: |2 - 4| = 2 and |4 - 2| = 2, mean 2; level (4 + 2 + 4) / 3
    assert exp_layerwise.relative_roughness([100.0, 4.0, 2.0, 4.0]) == pytest.approx(2 / (10 / 3))


def test_a_seed_that_did_not_learn_is_left_out_of_the_pairs_and_named():
    models = {"ALBERT-style": _model([2.0, 3.99, 2.0], [4.0, 4.0, 4.0], [[1.0, 0.5, 0.4]] * 3),
              "BERT-style": _model([2.0, 2.0, 2.0], [4.0, 4.0, 4.0], [[1.0, 0.9, 0.2]] * 3)}
    kept, dropped = exp_layerwise.kept_seeds(models, "ALBERT-style", [7, 8, 9])
    assert kept == [7, 9] and dropped == [(8, "ALBERT-style")]
    found = exp_layerwise.claims(_result(**models), [7, 8, 9])
    assert {c["id"]: c["seeds"] for c in found} == {"layerwise.l2": [7, 9], "layerwise.l2.relative": [7, 9],
                                                    "layerwise.cosine_degrees": [7, 9],
                                                    "layerwise.cosine_degrees.relative": [7, 9]}
    assert all("seed 8 left out: ALBERT-style stayed on the unigram plateau" in c["what"] for c in found)


def test_the_first_point_reading_follows_the_fraction_it_prints():
    """The sentence about Figure 1's first point is decided by the number it prints: the committed
    ALBERT-style model, whose embedding (norm about 1.5) is far shorter than its layers' outputs
    (about 8), must be read as an artifact, never as "the norms match"."""
    import re
    from minishare.experiments import exp_layerwise
    for forced in (0.02, 0.3, 0.96):
        text = exp_layerwise.first_point_reading(forced)
        assert re.search(r"(\d+)%", text).group(1) == f"{forced:.0%}"[:-1]
        assert ("artifact" in text) == (forced >= 0.5) and ("nearly match" in text) == (forced <= 0.1)
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "book", "figures",
                        "layerwise", "result.json")
    if not os.path.exists(path):
        pytest.skip("no committed layerwise result")
    with open(path, encoding="utf-8") as f:
        notes = exp_layerwise.observations(json.load(f)["result"])
    albert = next(n for n in notes if n.startswith("ALBERT-style") and "first point" in n)
    assert "artifact" in albert and "match" not in albert


def test_when_fewer_than_two_seeds_learned_every_seed_is_paired_and_the_gate_decides():
    from minishare.experiments import claims
    models = {"ALBERT-style": _model([3.99, 3.99], [4.0, 4.0], [[1.0, 0.5, 0.4]] * 2),
              "BERT-style": _model([2.0, 2.0], [4.0, 4.0], [[1.0, 0.9, 0.2]] * 2)}
    found = claims.finish(exp_layerwise.claims(_result(**models), [0, 1]),
                          exp_layerwise.baselines(_result(**models), None))
    primary = next(c for c in found if c["id"] == "layerwise.l2")
    assert primary["seeds"] == [0, 1] and "fewer than two seeds learned: all 2 paired" in primary["what"]
    assert primary["verdict"] == "cannot tell" and "not compared" in primary["statement"]


def test_a_training_recipe_other_than_the_albert_runs_is_in_the_request_and_the_name():
    """Figure 1's runs train at their own tuned rate and batch: the request carries them, the name
    says them (a run of another recipe never shares a cache entry), and the ALBERT runs' own
    recipe adds nothing to the name, so equal requests still get equal names."""
    settings = dataclasses.replace(FULL, layerwise_recipe=dict(lr=1e-3, batch_size=16))
    request = albert_arms.albert_request(settings, "all-shared", seed=3, steps=1600,
                                         recipe=settings.layerwise_recipe, num_hidden_layers=12)
    assert (request["lr"], request["batch_size"], request["steps"]) == (1e-3, 16, 1600)
    assert albert_arms.run_name(settings, "all-shared", seed=3, steps=1600, recipe=settings.layerwise_recipe,
                                num_hidden_layers=12) == "albert-all-shared-sop-1600steps-N12-b16-lr0.001-s3"
    usual = dict(lr=FULL.pretrain_lr, batch_size=FULL.batch_size)
    assert albert_arms.run_name(FULL, "all-shared", seed=3, recipe=usual) == albert_arms.run_name(FULL, "all-shared", seed=3)
