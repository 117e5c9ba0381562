"""The regularizer experiment compares a gap only between models that learned: a hand-made
result where not-shared stays above its unigram loss is not compared, whatever its gap."""
from minishare.experiments import claims, exp_regularizer, stats


def _model(held_out, train, unigram):
    return {"params": 1, "held_out": stats.spread(held_out), "train": stats.spread(train),
            "gap": stats.spread([h - t for h, t in zip(held_out, train)]), "unigram": stats.spread(unigram)}


def test_a_gap_is_compared_only_between_models_that_beat_the_unigram():
    learned = _model([3.0, 3.1, 3.2], [2.9, 3.0, 3.05], [3.9] * 3)
    result = {"window": 10, "models": {"all-shared": learned, "not-shared": _model([3.5, 3.6, 3.7], [3.0, 3.0, 3.1], [3.9] * 3)}}
    found = claims.finish(exp_regularizer.claims(result, [0, 1, 2]), exp_regularizer.baselines(result, None))
    assert {c["id"]: c["verdict"] for c in found}["regularizer.gap"] == "a better"     # gaps 0.1 against 0.57
    stuck = _model([4.0, 4.1, 4.0], [3.0, 3.0, 3.1], [3.9] * 3)                          # above its unigram 3.9
    result["models"]["not-shared"] = stuck
    found = claims.finish(exp_regularizer.claims(result, [0, 1, 2]), exp_regularizer.baselines(result, None))
    gap = next(c for c in found if c["id"] == "regularizer.gap")
    assert gap["verdict"] == "cannot tell" and "not compared, because not-shared does not beat" in gap["statement"]
