"""Tests of exercise 2: hand-worked graphs, finite differences of NumPy functions written here,
and the sum of the gradients of untied copies of a shared weight."""
import numpy as np
import pytest

import minishare
from minishare import Tensor
from engine import accumulated_gradients, backward, topological_order


def leaf(*shape, seed=0):
    return minishare.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


@pytest.fixture
def no_library_backward(monkeypatch):
    """The exercise is to write the walk: Tensor.backward is switched off."""
    def refuse(self, grad=None):
        raise AssertionError("backward() must not call Tensor.backward")
    monkeypatch.setattr(Tensor, "backward", refuse)


def numeric_gradient(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        g[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return g


@pytest.mark.ex02_task1
def test_topological_order_puts_inputs_first():
    a, b = leaf(2, seed=1), leaf(2, seed=2)
    c = a * b
    d = c + a
    e = d * c
    order = topological_order(e)
    assert len(order) == 5 and len({id(t) for t in order}) == 5
    position = {id(t): i for i, t in enumerate(order)}
    for t in order:
        for parent in (t._ctx.inputs if t._ctx else ()):
            if parent.requires_grad:
                assert position[id(parent)] < position[id(t)]


@pytest.mark.ex02_task1
def test_topological_order_of_a_deep_chain_is_iterative():
    x = leaf(1)
    y = x
    for _ in range(10_000):
        y = y * 1.0
    order = topological_order(y)
    assert len(order) == 10_001 and order[0] is x and order[-1] is y


@pytest.mark.ex02_task2
def test_a_scalar_used_twice_gets_both_gradients(no_library_backward):
    """f(w) = w · w · 3 at w = 2: df/dw = 6w = 12, the sum of the two uses' 6 + 6."""
    w = minishare.tensor(np.array(2.0), requires_grad=True)
    backward(w * w * 3.0, np.array(1.0))
    assert float(w.grad) == pytest.approx(12.0)


@pytest.mark.ex02_task2
def test_weight_used_by_two_layers_matches_finite_differences(no_library_backward):
    W, x = leaf(3, 3, seed=3), np.random.default_rng(4).standard_normal((3, 2))
    v = np.random.default_rng(5).standard_normal((3, 2))
    backward(W @ (W @ minishare.tensor(x)).tanh(), v)
    expected = numeric_gradient(lambda w: float((v * (w @ np.tanh(w @ x))).sum()), W.numpy())
    np.testing.assert_allclose(W.grad, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.ex02_task3
def test_accumulated_gradient_equals_the_full_batch_gradient():
    """Mean squared error of a linear model: uneven micro-batches (3 + 1 examples) must give the
    gradient of the mean over all 4, which finite differences of the NumPy loss give here."""
    rng = np.random.default_rng(6)
    X, y = rng.standard_normal((4, 3)), rng.standard_normal(4)
    w = minishare.tensor(rng.standard_normal(3), requires_grad=True)

    def loss(batch):
        xb, yb = batch
        r = minishare.tensor(xb) @ w.reshape(3, 1) - minishare.tensor(yb.reshape(-1, 1))
        return (r * r).mean()

    class Batch(tuple):
        def __len__(self):
            return len(self[0])

    batches = [Batch((X[:3], y[:3])), Batch((X[3:], y[3:]))]
    (grad,) = accumulated_gradients(loss, [w], batches)
    expected = numeric_gradient(lambda v: float(((X @ v - y) ** 2).mean()), w.numpy())
    np.testing.assert_allclose(grad, expected, rtol=1e-6)


### BEGIN HIDDEN TESTS
@pytest.mark.ex02_task1
def test_topological_order_lists_a_shared_leaf_once():
    w = leaf(2, seed=7)
    y = (w * w) + (w * 2.0)
    assert sum(t is w for t in topological_order(y)) == 1


@pytest.mark.ex02_task2
def test_shared_gradient_is_the_sum_of_untied_copies(no_library_backward):
    """Untie W into two leaves with the same values: their gradients add up to the shared one."""
    W, x = leaf(4, 4, seed=8), minishare.tensor(np.random.default_rng(9).standard_normal((4, 3)))
    v = np.random.default_rng(10).standard_normal((4, 3))
    backward(W @ (W @ x).relu(), v)
    W1, W2 = leaf(4, 4, seed=8), leaf(4, 4, seed=8)
    backward(W2 @ (W1 @ x).relu(), v)
    np.testing.assert_allclose(W.grad, W1.grad + W2.grad, rtol=1e-12)


@pytest.mark.ex02_task2
def test_backward_adds_to_an_existing_grad(no_library_backward):
    w = minishare.tensor(np.array([1.0, 2.0]), requires_grad=True)
    w.grad = np.array([10.0, 10.0])
    backward(w * 3.0, np.array([1.0, 1.0]))
    np.testing.assert_allclose(w.grad, [13.0, 13.0])


@pytest.mark.ex02_task3
def test_accumulation_starts_from_a_clean_gradient():
    w = minishare.tensor(np.array([1.0]), requires_grad=True)
    w.grad = np.array([100.0])

    class Batch(list):
        pass

    (grad,) = accumulated_gradients(lambda b: (w * float(sum(b))).sum(), [w], [Batch([1.0, 1.0]), Batch([4.0])])
    np.testing.assert_allclose(grad, [2.0 / 3 * 2.0 + 1.0 / 3 * 4.0])
### END HIDDEN TESTS
