"""Tests of exercise 13: the signal against math.sin/cos evaluated entry by entry, the encoder
against unrolled copies of its one layer (the library's Residual modules run step by step), and
ACT on hand-worked halting sequences."""
import copy
import math

import numpy as np
import pytest

import minishare
from universal import UniversalEncoder, act_halting, timestep_signal


@pytest.mark.ex13_task1
def test_signal_at_the_origin():
    np.testing.assert_allclose(timestep_signal(0, 1, 4), [[0.0, 2.0, 0.0, 2.0]])


@pytest.mark.ex13_task1
def test_signal_entry_by_entry():
    t, T, H = 3, 5, 6
    signal = timestep_signal(t, T, H)
    for p in range(T):
        for j in range(H // 2):
            w = 10000 ** (2 * j / H)
            assert signal[p, 2 * j] == pytest.approx(math.sin(p / w) + math.sin(t / w))
            assert signal[p, 2 * j + 1] == pytest.approx(math.cos(p / w) + math.cos(t / w))


@pytest.mark.ex13_task2
def test_one_layer_of_parameters_and_unrolled_equivalence():
    minishare.manual_seed(0)
    ut = UniversalEncoder(8, 2, 16, steps=3).double()
    one_layer = minishare.count_parameters(ut.attention) + minishare.count_parameters(ut.ffn)
    assert minishare.count_parameters(ut) == one_layer
    x = np.random.default_rng(1).standard_normal((2, 4, 8))
    out = ut(minishare.tensor(x)).numpy()
    h = minishare.tensor(x)
    for t in range(3):                         # unrolled: the same two modules at every step
        h = ut.ffn(ut.attention(h + timestep_signal(t, 4, 8)))
    np.testing.assert_allclose(out, h.numpy(), rtol=1e-12)


@pytest.mark.ex13_task3
def test_act_hand_worked():
    n, r, weights = act_halting([0.3, 0.5, 0.4])
    assert n == 3 and r == pytest.approx(0.2)
    np.testing.assert_allclose(weights, [0.3, 0.5, 0.2])
    assert n + r == pytest.approx(3.2)                                  # the ponder cost


### BEGIN HIDDEN TESTS
@pytest.mark.ex13_task1
def test_signals_of_different_steps_differ_by_the_step_part_only():
    a, b = timestep_signal(1, 4, 8), timestep_signal(2, 4, 8)
    difference = b - a                                                  # the same for every position
    np.testing.assert_allclose(difference, np.broadcast_to(difference[0], difference.shape), atol=1e-12)
    assert np.abs(difference).max() > 0.1


@pytest.mark.ex13_task2
def test_shared_gradient_is_the_sum_over_steps():
    """Untie the steps into deep copies of the one layer: their gradients add up to the shared one."""
    minishare.manual_seed(2)
    ut = UniversalEncoder(4, 2, 8, steps=2).double()
    x = np.random.default_rng(3).standard_normal((1, 3, 4))
    v = np.random.default_rng(4).standard_normal((1, 3, 4))
    ut(minishare.tensor(x)).backward(v)
    shared = ut.ffn.sublayer.ffn.weight.grad.copy()
    copies = [(copy.deepcopy(ut.attention), copy.deepcopy(ut.ffn)) for _ in range(2)]
    for attention, ffn in copies:
        for p in list(attention.parameters()) + list(ffn.parameters()):
            p.grad = None
    h = minishare.tensor(x)
    for t, (attention, ffn) in enumerate(copies):
        h = ffn(attention(h + timestep_signal(t, 3, 4)))
    h.backward(v)
    np.testing.assert_allclose(shared, sum(ffn.sublayer.ffn.weight.grad for _, ffn in copies), rtol=1e-9)


@pytest.mark.ex13_task3
def test_act_halts_at_the_first_step_or_runs_to_the_end():
    n, r, weights = act_halting([0.995, 0.5])
    assert n == 1 and r == pytest.approx(1.0) and weights == [pytest.approx(1.0)]
    n, r, weights = act_halting([0.1, 0.1, 0.1])
    assert n == 3 and r == pytest.approx(0.8) and sum(weights) == pytest.approx(1.0)
    n, _, _ = act_halting([0.5, 0.495, 0.3])                           # 0.995 ≥ 0.99: halts at 2
    assert n == 2
### END HIDDEN TESTS
