"""``gradcheck``: does an op's backward agree with the definition of a derivative?

For inputs x and a function f, backward() computes the vector-Jacobian product vᵀ J for a
cotangent v. The check compares it, entry by entry, with central differences of the scalar
φ(x) = Σ v ⊙ f(x)::

    ∂φ/∂x_i ≈ (φ(x + ε e_i) - φ(x - ε e_i)) / 2ε        (error O(ε²)).

A random v (not all ones, which is what a plain sum would use) makes it unlikely that two wrong
gradient entries cancel. Everything runs in float64, where ε = 1e-6 leaves about 1e-9 of error.
"""
import numpy   # host-side: the finite differences run on host copies of the inputs

from minishare import backend
from minishare.errors import MinishareError
from minishare.tensor import Tensor, no_grad


class GradcheckError(MinishareError, AssertionError):
    """The analytic gradient of some input disagrees with the numerical one."""


def gradcheck(fn, *inputs, eps=1e-6, atol=1e-5, rtol=1e-4, seed=0, names=None):
    """Check ``fn``'s gradients with respect to every input that requires grad.

    ``fn(*inputs)`` must return a Tensor; inputs that require grad must be float64 (build them
    with ``minishare.tensor(np.random.randn(3, 4), requires_grad=True)``). Returns True, or raises
    GradcheckError naming the input, the first bad index, and the expected and received values.
    Randomness inside ``fn`` (dropout) must be re-seeded inside ``fn`` so every call agrees.
    """
    names = names or [f"input {i}" for i in range(len(inputs))]
    checked = [(name, x) for name, x in zip(names, inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not checked:
        raise ValueError("gradcheck: no input has requires_grad=True, so there is nothing to check")
    for name, x in checked:
        if x.dtype != backend.xp.float64:
            raise TypeError(f"gradcheck: {name} is {x.dtype}; use float64 (finite differences in "
                            "float32 are too coarse to tell a right gradient from a wrong one)")
        x.grad = None

    out = fn(*inputs)
    if not isinstance(out, Tensor) or not out.requires_grad:
        raise ValueError("gradcheck: fn must return a Tensor that depends on the inputs")
    v = backend.asarray(numpy.random.default_rng(seed).standard_normal(out.shape))
    out.backward(v)

    for name, x in checked:
        host = backend.to_numpy(x.data).copy()
        analytic = backend.to_numpy(x.grad) if x.grad is not None else numpy.zeros_like(host)
        numeric = numpy.zeros_like(host)
        with no_grad():
            for i in numpy.ndindex(*host.shape):
                numeric[i] = (_phi(fn, inputs, x, host, i, +eps, v) -
                              _phi(fn, inputs, x, host, i, -eps, v)) / (2 * eps)
        x.data = backend.asarray(host)
        bad = abs(analytic - numeric) > atol + rtol * abs(numeric)
        if bad.any():
            i = tuple(int(k) for k in numpy.argwhere(bad)[0])
            raise GradcheckError(
                f"gradcheck failed for {name} (shape {host.shape}) at index {i}: "
                f"expected {numeric[i]:.8g} (finite differences), received {analytic[i]:.8g} "
                f"(backward); {int(bad.sum())} of {bad.size} entries disagree")
    return True


def _phi(fn, inputs, x, host, i, step, v):
    """φ = Σ v ⊙ fn(inputs) with x[i] moved by ``step``."""
    shifted = host.copy()
    shifted[i] += step
    x.data = backend.asarray(shifted)
    return float((fn(*inputs).data * v).sum())
