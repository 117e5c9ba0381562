"""Tests of exercise 11: a weight shared by several layers, listed once per layer, must move and
keep state as one tensor; Adam's steps are worked out in NumPy here; norms by hand."""

import numpy as np
import pytest

import minishare
from minishare.nn import Linear, Parameter
from optimizer import Adam, clip_grad_norm_, distinct


def shared_stack(L=3):
    """L 'layers' that all use one Linear: the naive list holds its two tensors L times."""
    minishare.manual_seed(0)
    layer = Linear(2, 2).double()
    naive = [p for _ in range(L) for p in layer.parameters()]
    return layer, naive


@pytest.mark.ex11_task1
def test_distinct_by_identity_in_order():
    a, b = Parameter(np.zeros(2)), Parameter(np.zeros(2))
    assert distinct([a, b, a, a, b]) == [a, b]
    assert distinct([b, a]) == [b, a]
    assert len(distinct([a, Parameter(np.zeros(2))])) == 2      # equal values, different tensors


@pytest.mark.ex11_task2
def test_first_adam_step_moves_a_shared_weight_once():
    """On the first step m̂ = g and v̂ = g², so each coordinate moves by lr · g / (|g| + ε), about
    lr · sign(g): once, however many times the naive list holds the tensor."""
    layer, naive = shared_stack()
    before = layer.weight.data.copy()
    layer.weight.grad = np.array([[1.0, -2.0], [0.5, 4.0]])
    optimizer = Adam(naive, lr=0.1)
    optimizer.step()
    g = layer.weight.grad
    np.testing.assert_allclose(layer.weight.data, before - 0.1 * g / (np.abs(g) + 1e-8), rtol=1e-12)
    assert len(optimizer.state) == 1                              # the bias had no grad


@pytest.mark.ex11_task3
def test_norm_counts_a_shared_gradient_once():
    layer, naive = shared_stack()
    layer.weight.grad = np.array([[3.0, 0.0], [0.0, 0.0]])
    layer.bias.grad = np.array([0.0, 4.0])
    assert clip_grad_norm_(naive, max_norm=100.0) == pytest.approx(5.0)
    np.testing.assert_allclose(layer.bias.grad, [0.0, 4.0])


### BEGIN HIDDEN TESTS
@pytest.mark.ex11_task2
def test_two_adam_steps_by_hand():
    layer, naive = shared_stack(L=4)
    w0 = layer.weight.data.copy()
    g1, g2 = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[-1.0, 0.5], [2.0, -3.0]])
    optimizer = Adam(naive, lr=0.01, betas=(0.8, 0.9), eps=1e-6)
    m = v = 0.0
    w = w0
    for t, g in enumerate((g1, g2), start=1):
        layer.weight.grad = g
        optimizer.step()
        m, v = 0.8 * m + 0.2 * g, 0.9 * v + 0.1 * g * g
        w = w - 0.01 * (m / (1 - 0.8 ** t)) / (np.sqrt(v / (1 - 0.9 ** t)) + 1e-6)
    np.testing.assert_allclose(layer.weight.data, w, rtol=1e-12)
    assert optimizer.state[id(layer.weight)]["step"] == 2


@pytest.mark.ex11_task2
def test_zero_grad_and_a_model_with_a_tied_table():
    from minishare.models import AlbertConfig, AlbertForPreTraining
    minishare.manual_seed(1)
    model = AlbertForPreTraining(AlbertConfig(vocab_size=20, embedding_size=4, hidden_size=8,
                                              num_hidden_layers=3, num_attention_heads=2,
                                              intermediate_size=8, max_position_embeddings=8))
    naive = [p for _, p in model.named_parameters(remove_duplicate=False)]
    assert len(naive) > len(list(model.parameters()))
    model(np.array([[1, 2, 3]]), labels=np.array([[1, -100, 3]])).loss.backward()
    optimizer = Adam(naive, lr=0.01)
    optimizer.step()
    assert len(optimizer.state) == sum(p.grad is not None for p in model.parameters())
    optimizer.zero_grad()
    assert all(p.grad is None for p in model.parameters())


@pytest.mark.ex11_task3
def test_clipping_scales_every_distinct_gradient_once():
    layer, naive = shared_stack()
    layer.weight.grad = np.array([[6.0, 0.0], [0.0, 0.0]])
    layer.bias.grad = np.array([0.0, 8.0])
    assert clip_grad_norm_(naive, max_norm=1.0) == pytest.approx(10.0)
    np.testing.assert_allclose(layer.weight.grad, [[0.6, 0.0], [0.0, 0.0]])
    np.testing.assert_allclose(layer.bias.grad, [0.0, 0.8])
### END HIDDEN TESTS
