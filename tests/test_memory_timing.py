"""Back-to-back timing and the step profile (``minishare.analysis.memory``). Nothing here asserts
on how long anything takes."""
import numpy as np
import pytest

import minishare
from minishare import optim
from minishare.analysis import memory
from minishare.models import AlbertConfig, AlbertForPreTraining


def setup(sharing, calls, name):
    minishare.manual_seed(0)
    model = AlbertForPreTraining(AlbertConfig(vocab_size=20, embedding_size=8, hidden_size=16,
                                              num_hidden_layers=3, num_attention_heads=2,
                                              intermediate_size=32, max_position_embeddings=8,
                                              sharing=sharing))
    ids = np.arange(12).reshape(2, 6) % 20

    def loss_fn(m):
        calls.append((name, m.training))
        return m(input_ids=ids, labels=ids, sentence_order_label=np.array([0, 1])).loss
    return model, loss_fn, optim.AdamW(model.parameters())


@pytest.mark.parametrize("inference", [False, True])
def test_rounds_alternate_and_nothing_changes(inference):
    calls = []
    setups = {name: setup(name, calls, name) for name in ("not-shared", "all-shared")}
    before = {name: [p.numpy().copy() for p in s[0].parameters()] for name, s in setups.items()}
    times = memory.interleaved_step_times(setups, repeats=3, warmup=1, inference=inference)
    # round 0 (warm-up) in order, round 1 reversed, round 2 in order, round 3 reversed
    assert [name for name, _ in calls] == ["not-shared", "all-shared", "all-shared", "not-shared"] * 2
    assert all(training is not inference for _, training in calls)
    for name, (model, _, optimizer) in setups.items():
        assert len(times[name]["wall"]) == len(times[name]["cpu"]) == 3
        assert all(t >= 0 for t in times[name]["wall"] + times[name]["cpu"])
        for p, value in zip(model.parameters(), before[name]):
            np.testing.assert_array_equal(p.numpy(), value)
            assert p.grad is None
        assert optimizer.state == {} and model.training


def test_paired_ratios_divide_within_a_round():
    times = {"a": {"cpu": [2.0, 3.0], "wall": [1.0, 1.0]}, "b": {"cpu": [1.0, 6.0], "wall": [4.0, 2.0]}}
    assert memory.paired_ratios(times, "a", "b") == [2.0, 0.5]
    assert memory.paired_ratios(times, "a", "b", "wall") == [0.25, 0.5]


def test_bad_repeats_are_named():
    calls = []
    with pytest.raises(ValueError, match="repeats"):
        memory.interleaved_step_times({"x": setup("all-shared", calls, "x")}, repeats=0)
    with pytest.raises(ValueError, match="at least one"):
        memory.interleaved_step_times({})


def test_profile_parts_are_parts_of_the_total():
    calls = []
    model, loss_fn, optimizer = setup("all-shared", calls, "x")
    got = memory.profile_step(model, loss_fn, optimizer, steps=2)
    assert 0 < got["accumulate"] < got["total"] and 0 < got["optimizer"] < got["total"]
    assert len(calls) == 3                                       # one untimed step, then two
    assert optimizer.state == {} and all(p.grad is None for p in model.parameters())

