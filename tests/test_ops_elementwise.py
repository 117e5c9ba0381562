"""Elementwise ops (minishare/ops/elementwise.py, ops/nonlinear.py): gradcheck in float64 on random
broadcast-compatible shapes, forward values against NumPy formulas written here."""
import numpy as np
import pytest
from hypothesis import example, given, strategies as st
from hypothesis.extra import numpy as hnp

import minishare.functional as F
from conftest import away_from_zero, check, const, grad_of, host, leaf, positive, randn

seeds = st.integers(0, 2**16)
shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3)
pairs = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=1, max_side=3)
triples = hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, min_side=1, max_side=3)
BROADCAST_EXAMPLE = hnp.BroadcastableShapes(input_shapes=((2, 1, 3), (4, 1)), result_shape=(2, 4, 3))
SCALAR_EXAMPLE = hnp.BroadcastableShapes(input_shapes=((), ()), result_shape=())


def sum_to(grad, shape):
    """Reference for the broadcasting rule of the backward: sum over the axes broadcasting added."""
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1)
    return grad.sum(axis=axes).reshape(shape)


BINARY = {  # name: (minishare op, NumPy reference, dL/da, dL/db for upstream g)
    "add": (lambda a, b: a + b, np.add, lambda a, b, g: g, lambda a, b, g: g),
    "sub": (lambda a, b: a - b, np.subtract, lambda a, b, g: g, lambda a, b, g: -g),
    "mul": (lambda a, b: a * b, np.multiply, lambda a, b, g: g * b, lambda a, b, g: g * a),
    "div": (lambda a, b: a / b, np.divide, lambda a, b, g: g / b, lambda a, b, g: -g * a / b ** 2),
}


@pytest.mark.parametrize("name", BINARY)
@given(shapes=pairs, seed=seeds)
@example(shapes=BROADCAST_EXAMPLE, seed=0)
def test_binary_ops_broadcast(name, shapes, seed):
    op, ref, da, db = BINARY[name]
    sa, sb = shapes.input_shapes
    a_host = randn(*sa, seed=seed)
    b_host = away_from_zero(*sb, seed=seed + 1) if name == "div" else randn(*sb, seed=seed + 1)
    a, b = leaf(a_host), leaf(b_host)
    out = op(a, b)
    expected = ref(a_host, b_host)
    assert out.shape == expected.shape == shapes.result_shape
    np.testing.assert_allclose(host(out), expected, rtol=1e-12)
    # the gradient, summed over the broadcast axes, against the hand-written derivative
    g = randn(*expected.shape, seed=seed + 2)
    out.backward(g)
    for t, d, s in ((a, da, sa), (b, db, sb)):
        by_hand = sum_to(np.broadcast_to(d(a_host, b_host, g), expected.shape), s)
        np.testing.assert_allclose(grad_of(t), by_hand, rtol=1e-10, atol=1e-12)
    check(op, leaf(a_host), leaf(b_host))


@pytest.mark.parametrize("name", BINARY)
def test_binary_ops_on_scalars(name):
    op = BINARY[name][0]
    check(op, leaf(np.array(1.5)), leaf(np.array(-0.75)))


def test_bias_gradient_sums_over_batch_and_time():
    """A bias (H,) added to (B, T, H) gets Σ over B and T (hand-worked with ones)."""
    x, b = leaf(randn(2, 3, 4)), leaf(np.zeros(4))
    (x + b).sum().backward()
    np.testing.assert_array_equal(grad_of(b), np.full(4, 6.0))


SCALAR_OPS = {  # a Python number on either side
    "x+2": (lambda x: x + 2, lambda x: x + 2),
    "2+x": (lambda x: 2 + x, lambda x: 2 + x),
    "x-2": (lambda x: x - 2, lambda x: x - 2),
    "2-x": (lambda x: 2 - x, lambda x: 2 - x),
    "x*2.5": (lambda x: x * 2.5, lambda x: x * 2.5),
    "2.5*x": (lambda x: 2.5 * x, lambda x: 2.5 * x),
    "x/4": (lambda x: x / 4, lambda x: x / 4),
    "4/x": (lambda x: 4 / x, lambda x: 4 / x),
}


@pytest.mark.parametrize("name", SCALAR_OPS)
def test_ops_with_python_numbers(name):
    op, ref = SCALAR_OPS[name]
    x_host = away_from_zero(2, 3, seed=11)
    np.testing.assert_allclose(host(op(leaf(x_host))), ref(x_host), rtol=1e-12)
    check(op, leaf(x_host))


def test_neg():
    x_host = randn(2, 3)
    np.testing.assert_array_equal(host(-leaf(x_host)), -x_host)
    check(lambda x: -x, leaf(x_host))


@pytest.mark.parametrize("p", [2, 3, 1, 0, 0.5, -1.5, 2.5])
def test_pow(p):
    # fractional exponents need positive bases; integer ones take any sign
    x_host = positive(2, 3, seed=12) if isinstance(p, float) else randn(2, 3, seed=12)
    x = leaf(x_host)
    y = x ** p
    np.testing.assert_allclose(host(y), x_host ** p, rtol=1e-12)
    y.sum().backward()
    np.testing.assert_allclose(grad_of(x), p * x_host ** (p - 1) if p else 0 * x_host, rtol=1e-12)
    check(lambda a: a ** p, leaf(x_host))


def test_pow_rejects_a_tensor_exponent():
    with pytest.raises(TypeError, match="exponent"):
        leaf(randn(3)) ** leaf(randn(3))


UNARY = {  # name: (op, NumPy reference, input maker)
    "exp": (lambda x: x.exp(), np.exp, randn),
    "log": (lambda x: x.log(), np.log, positive),
    "sqrt": (lambda x: x.sqrt(), np.sqrt, positive),
    "tanh": (lambda x: x.tanh(), np.tanh, randn),
    "relu": (lambda x: x.relu(), lambda x: np.maximum(x, 0), lambda *s, seed: away_from_zero(*s, seed=seed, low=0.1)),
    "F.relu": (F.relu, lambda x: np.maximum(x, 0), lambda *s, seed: away_from_zero(*s, seed=seed, low=0.1)),
    "F.tanh": (F.tanh, np.tanh, randn),
}


@pytest.mark.parametrize("name", UNARY)
@given(shape=shapes, seed=seeds)
def test_unary_ops(name, shape, seed):
    op, ref, make = UNARY[name]
    x_host = make(*shape, seed=seed)
    out = op(leaf(x_host))
    assert out.shape == shape
    np.testing.assert_allclose(host(out), ref(x_host), rtol=1e-12)
    check(op, leaf(x_host))


def test_relu_subgradient_at_zero_is_zero():
    x = leaf(np.array([-1.0, 0.0, 2.0]))
    x.relu().sum().backward()
    np.testing.assert_array_equal(grad_of(x), [0.0, 0.0, 1.0])


# --- where and masked_fill --------------------------------------------------------------------------
@given(shapes=triples, seed=seeds)
def test_where_broadcast(shapes, seed):
    sc, sa, sb = shapes.input_shapes
    cond = np.random.default_rng(seed).random(sc) < 0.5
    a_host, b_host = randn(*sa, seed=seed + 1), randn(*sb, seed=seed + 2)
    out = F.where(cond, leaf(a_host), leaf(b_host))
    expected = np.where(cond, a_host, b_host)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(host(out), expected)
    check(lambda a, b: F.where(cond, a, b), leaf(a_host), leaf(b_host))


def test_where_gradient_by_hand():
    cond = np.array([True, False, True])
    a, b = leaf(np.ones(3)), leaf(np.ones(3))
    F.where(const(cond), a, b).sum().backward()       # the condition may also be a Tensor
    np.testing.assert_array_equal(grad_of(a), [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(grad_of(b), [0.0, 1.0, 0.0])


def test_masked_fill():
    x_host = randn(2, 4, seed=13)
    mask = np.array([[False, True, False, True]])        # broadcast over rows
    x = leaf(x_host)
    y = F.masked_fill(x, mask, -5.0)
    assert y.dtype == np.float64
    np.testing.assert_array_equal(host(y), np.where(mask, -5.0, x_host))
    y.sum().backward()
    np.testing.assert_array_equal(grad_of(x), np.broadcast_to(~mask, (2, 4)).astype(float))
    check(lambda t: F.masked_fill(t, mask, -5.0), leaf(x_host))


def test_masked_fill_with_minus_infinity():
    y = F.masked_fill(leaf(randn(2, 3)), np.array([True, False, False]), float("-inf"))
    assert np.all(np.isneginf(host(y)[:, 0])) and np.all(np.isfinite(host(y)[:, 1:]))
