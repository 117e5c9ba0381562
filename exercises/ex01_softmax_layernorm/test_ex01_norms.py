"""Tests of exercise 1 against hand-worked values and finite differences (minishare.gradcheck)."""
import math

import numpy as np
import pytest

import minishare
from norms import LayerNorm, RMSNorm, Softmax


def leaf(*shape, seed=0):
    return minishare.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


@pytest.mark.ex01_task1
def test_softmax_hand_worked():
    y = Softmax.apply(minishare.tensor(np.log([[1.0, 2.0, 3.0]])), axis=-1).numpy()
    np.testing.assert_allclose(y, [[1 / 6, 2 / 6, 3 / 6]], rtol=1e-12)


@pytest.mark.ex01_task1
def test_softmax_large_logits_do_not_overflow():
    y = Softmax.apply(minishare.tensor(np.array([[1000.0, 1000.0 + math.log(3)]])), axis=-1).numpy()
    np.testing.assert_allclose(y, [[0.25, 0.75]], rtol=1e-12)


@pytest.mark.ex01_task2
def test_softmax_backward_gradcheck_last_axis():
    assert minishare.gradcheck(lambda x: Softmax.apply(x, axis=-1), leaf(3, 5))


@pytest.mark.ex01_task2
def test_softmax_backward_one_output_hand_worked():
    """d y_0 / d x_k = y_0 (δ_0k - y_k): with g = e_0 the gradient is that row of the Jacobian."""
    x = minishare.tensor(np.log([[1.0, 1.0, 2.0]]), requires_grad=True)
    Softmax.apply(x, axis=-1).backward(np.array([[1.0, 0.0, 0.0]]))
    np.testing.assert_allclose(x.grad, [[0.25 * 0.75, -0.25 * 0.25, -0.25 * 0.5]], rtol=1e-12)


@pytest.mark.ex01_task3
def test_layer_norm_forward_hand_worked():
    x = minishare.tensor(np.array([[1.0, 3.0]]))
    y = LayerNorm.apply(x, minishare.tensor(np.array([2.0, 2.0])), minishare.tensor(np.array([0.0, 1.0])),
                        eps=0.0).numpy()
    np.testing.assert_allclose(y, [[-2.0, 3.0]], rtol=1e-12)      # x̂ = (-1, 1)


@pytest.mark.ex01_task3
def test_layer_norm_backward_gradcheck():
    x, w, b = leaf(4, 6, seed=1), leaf(6, seed=2), leaf(6, seed=3)
    assert minishare.gradcheck(lambda x, w, b: LayerNorm.apply(x, w, b), x, w, b)


@pytest.mark.ex01_task4
def test_rms_norm_forward_hand_worked():
    y = RMSNorm.apply(minishare.tensor(np.array([[3.0, 4.0]])), minishare.tensor(np.array([1.0, 2.0])),
                      eps=0.0).numpy()
    rms = math.sqrt(12.5)
    np.testing.assert_allclose(y, [[3 / rms, 8 / rms]], rtol=1e-12)


@pytest.mark.ex01_task4
def test_rms_norm_backward_gradcheck():
    x, w = leaf(3, 5, seed=4), leaf(5, seed=5)
    assert minishare.gradcheck(lambda x, w: RMSNorm.apply(x, w), x, w)


### BEGIN HIDDEN TESTS
@pytest.mark.ex01_task2
def test_softmax_backward_gradcheck_first_axis_of_3d():
    assert minishare.gradcheck(lambda x: Softmax.apply(x, axis=0), leaf(3, 2, 4, seed=6))


@pytest.mark.ex01_task3
def test_layer_norm_gradient_ignores_a_shift_of_the_row():
    """LN(x + c) = LN(x) for any constant c per row, so dL/dx sums to zero along each row."""
    x, w, b = leaf(5, 7, seed=7), leaf(7, seed=8), leaf(7, seed=9)
    LayerNorm.apply(x, w, b).backward(np.random.default_rng(10).standard_normal((5, 7)))
    np.testing.assert_allclose(x.grad.sum(axis=-1), 0, atol=1e-10)


@pytest.mark.ex01_task3
def test_layer_norm_backward_gradcheck_3d():
    x, w, b = leaf(2, 3, 4, seed=11), leaf(4, seed=12), leaf(4, seed=13)
    assert minishare.gradcheck(lambda x, w, b: LayerNorm.apply(x, w, b, eps=1e-3), x, w, b)


@pytest.mark.ex01_task4
def test_rms_norm_gradient_is_orthogonal_to_the_row_when_w_is_one():
    """RMSNorm(s x) = RMSNorm(x) for s > 0 (eps = 0): the gradient has no component along x."""
    x = leaf(4, 6, seed=14)
    RMSNorm.apply(x, minishare.tensor(np.ones(6)), eps=0.0).backward(
        np.random.default_rng(15).standard_normal((4, 6)))
    np.testing.assert_allclose((x.grad * x.numpy()).sum(axis=-1), 0, atol=1e-10)
### END HIDDEN TESTS
