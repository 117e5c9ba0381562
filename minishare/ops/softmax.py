"""softmax and log_softmax along an axis, numerically stable.

Both subtract the row maximum before exponentiating (exp(x - m) ≤ 1, so logits of ±1e4 neither
overflow nor underflow to all-zero). Masked positions hold -inf and get probability exactly 0.
A fully masked row (every entry -inf) has no distribution: softmax returns all zeros there and
log_softmax all -inf, and no gradient flows through it — so a padded query that may attend
nowhere contributes nothing instead of spreading NaN through the batch.
"""
from minishare import backend
from minishare.tensor import Function


def _shifted(x, axis):
    """x - max(x) along axis, with the max of an all -inf row taken as 0 (so no -inf - -inf)."""
    xp = backend.xp
    m = backend.max_along(x, axis)
    return x - xp.where(xp.isfinite(m), m, 0)


def _sum(a, axis):
    """Σ along ``axis``, kept as an axis of size 1. Along the last axis as a product with ones: one
    BLAS pass, where NumPy's sum over a short last axis (attention's 64 keys) takes 4 times as long."""
    if axis in (-1, a.ndim - 1):
        return (a @ backend.xp.ones(a.shape[-1], dtype=a.dtype))[..., None]
    return a.sum(axis=axis, keepdims=True)


class Softmax(Function):
    """y_i = exp(x_i) / Σ_j exp(x_j) along ``axis``.  dL/dx = y ⊙ (g - Σ_j g_j y_j)."""

    def forward(self, x, axis=-1):
        xp, self.axis = backend.xp, axis
        e = _shifted(x, axis)                                    # a new array: work in place
        xp.exp(e, out=e)
        total = _sum(e, axis)
        e /= xp.where(total == 0, 1, total)                      # all-masked rows stay 0
        self.y = e
        return e

    def backward(self, grad):
        y = self.y
        g = grad * y
        backend.xp.subtract(grad, _sum(g, self.axis), out=g)
        g *= y
        return (g,)


class LogSoftmax(Function):
    """y_i = x_i - log Σ_j exp(x_j) along ``axis``.  dL/dx = g - softmax(x) Σ_j g_j."""

    def forward(self, x, axis=-1):
        xp, self.axis = backend.xp, axis
        s = _shifted(x, axis)
        total = xp.exp(s).sum(axis=axis, keepdims=True)
        y = s - xp.log(xp.where(total == 0, 1, total))
        self.p = xp.exp(y)                                         # softmax(x); 0 where masked
        self.finite = xp.isfinite(y)
        return y

    def backward(self, grad):
        g = backend.xp.where(self.finite, grad, 0)
        return (g - self.p * g.sum(axis=self.axis, keepdims=True),)
