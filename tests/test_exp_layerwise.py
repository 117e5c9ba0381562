"""Figure 1's observations name what the mean over seeds hides: a seed that stayed on the unigram
plateau, and a fixed point reached only by such a seed. Checked on a hand-made result."""
from minishare.experiments import exp_layerwise


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
    line = exp_layerwise.observations(r)[-1]
    assert "none, layer 2" in line and "collapse is the plateau's" in line


def test_a_fixed_point_of_a_seed_that_learned_is_not_blamed_on_the_plateau():
    r = _result(shared=_model([2.0, 2.5], [4.0, 4.0], [[1.0, 0.5, 0.4], [1.0, 0.005, 0.001]]))
    line = exp_layerwise.observations(r)[-1]
    assert "layer 2" in line and "plateau" not in line
