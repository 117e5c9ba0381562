"""minishare.gradcheck itself: it passes a right gradient, catches wrong ones with a message that
names the input, the index and both values, and refuses float32."""
import re

import numpy as np
import pytest

import minishare
from minishare import GradcheckError, Function, backend, gradcheck
from conftest import const, host, leaf, randn


class Square(Function):
    """y = x², right: dy/dx = 2x."""

    def forward(self, x):
        self.x = x
        return x * x

    def backward(self, grad):
        return (2 * grad * self.x,)


class WrongSquare(Square):
    """y = x², with the factor 2 forgotten in backward."""

    def backward(self, grad):
        return (grad * self.x,)


class WrongAtOneEntry(Function):
    """y = a * b; right for a, and for b everywhere except entry (1, 2)."""

    def forward(self, a, b):
        self.a, self.b = a, b
        return a * b

    def backward(self, grad):
        grad_b = grad * self.a
        grad_b[1, 2] += 1.0
        return grad * self.b, grad_b


def parse_values(message):
    expected = float(re.search(r"expected (\S+) \(finite differences\)", message).group(1))
    received = float(re.search(r"received (\S+) \(backward\)", message).group(1))
    return expected, received


def test_passes_a_correct_op():
    assert gradcheck(Square.apply, leaf(randn(3, 4))) is True


def test_gradcheck_is_an_assertion_error():
    assert issubclass(GradcheckError, AssertionError)


def test_catches_a_wrong_gradient_and_reports_it():
    x_host = randn(3, 4, seed=1)
    with pytest.raises(GradcheckError) as info:
        gradcheck(WrongSquare.apply, leaf(x_host))
    message = str(info.value)
    assert "input 0" in message and "(3, 4)" in message
    assert "index (0, 0)" in message                  # every entry is wrong: the first is reported
    assert "12 of 12" in message
    # by hand: φ = Σ v x², so the finite difference is 2 v x, and the wrong backward gives v x,
    # with v the cotangent gradcheck draws from seed 0
    v = np.random.default_rng(0).standard_normal((3, 4))
    expected, received = parse_values(message)
    np.testing.assert_allclose(expected, 2 * v[0, 0] * x_host[0, 0], rtol=1e-6)
    np.testing.assert_allclose(received, v[0, 0] * x_host[0, 0], rtol=1e-6)


def test_reports_the_bad_input_and_index():
    a_host, b_host = randn(2, 3, seed=2), randn(2, 3, seed=3)
    with pytest.raises(GradcheckError) as info:
        gradcheck(WrongAtOneEntry.apply, leaf(a_host), leaf(b_host), names=["a", "b"])
    message = str(info.value)
    assert "for b " in message and "index (1, 2)" in message and "1 of 6" in message
    v = np.random.default_rng(0).standard_normal((2, 3))
    expected, received = parse_values(message)
    np.testing.assert_allclose(expected, v[1, 2] * a_host[1, 2], rtol=1e-6)
    np.testing.assert_allclose(received, v[1, 2] * a_host[1, 2] + 1.0, rtol=1e-6)


def test_default_names_count_all_inputs():
    with pytest.raises(GradcheckError, match="input 2"):
        gradcheck(lambda c, a, b: WrongAtOneEntry.apply(a, b) * c,
                  const(np.ones((2, 3))), leaf(randn(2, 3)), leaf(randn(2, 3, seed=1)))


def test_refuses_float32():
    x = minishare.tensor(np.ones(3, dtype=np.float32), requires_grad=True)
    with pytest.raises(TypeError, match="input 0 is float32; use float64"):
        gradcheck(Square.apply, x)


def test_needs_an_input_that_requires_grad():
    with pytest.raises(ValueError, match="no input has requires_grad"):
        gradcheck(Square.apply, const(randn(3)))


def test_fn_must_return_a_dependent_tensor():
    with pytest.raises(ValueError, match="must return a Tensor"):
        gradcheck(lambda x: host(x), leaf(randn(3)))


def test_leaves_the_inputs_unchanged():
    x_host = randn(2, 3, seed=4)
    x = leaf(x_host)
    gradcheck(Square.apply, x)
    np.testing.assert_array_equal(host(x), x_host)
    assert backend.is_array(x.data)
