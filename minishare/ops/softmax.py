"""softmax and log_softmax along an axis, numerically stable.

Both subtract the row maximum before exponentiating (exp(x - m) ≤ 1, so logits of ±1e4 neither
overflow nor underflow to all-zero). Masked positions hold -inf and get probability exactly 0;
softmax also takes the mask itself (``mask``: True = keep), as attention does, so that masking
costs no op of its own. A fully masked row (every entry -inf) has no distribution: softmax returns
all zeros there and log_softmax all -inf, and no gradient flows through it — so a padded query
that may attend nowhere contributes nothing instead of spreading NaN through the batch.

``Softmax`` is the equation; ``FastSoftmax`` computes the same numbers in place, with its sums as
products with ones (see ``minishare.backend``: the ops' two forms).
"""
from minishare import backend
from minishare.tensor import Function


def _masked(x, mask):
    """x with -inf where ``mask`` is False (a new array), or x itself without a mask."""
    return x if mask is None else backend.xp.where(mask, x, x.dtype.type(-float("inf")))


def _row_max(x, axis):
    """max(x) along axis, kept as an axis of size 1, with the max of an all -inf row taken as 0
    (so that x - max has no -inf - -inf)."""
    xp = backend.xp
    m = backend.max_along(x, axis)
    return xp.where(xp.isfinite(m), m, 0)


class Softmax(Function):
    """y_i = exp(x_i) / Σ_j exp(x_j) along ``axis``, x_i = -inf where ``mask`` is False.
    dL/dx = y ⊙ (g - Σ_j g_j y_j)."""

    def forward(self, x, axis=-1, mask=None):
        xp, x = backend.xp, _masked(x, mask)
        e = xp.exp(x - _row_max(x, axis))
        total = e.sum(axis=axis, keepdims=True)
        self.y, self.axis = e / xp.where(total == 0, 1, total), axis   # all-masked rows stay 0
        return self.y

    def backward(self, grad):
        y = self.y
        weighted = (grad * y).sum(axis=self.axis, keepdims=True)          # Σ_j g_j y_j
        return (y * (grad - weighted),)


def _sum(a, axis):
    """Σ along ``axis``, kept as an axis of size 1. Along the last axis as a product with ones: one
    BLAS pass, where NumPy's sum over a short last axis (attention's 64 keys) takes 4 times as long."""
    if axis in (-1, a.ndim - 1):
        return (a @ backend.xp.ones(a.shape[-1], dtype=a.dtype))[..., None]
    return a.sum(axis=axis, keepdims=True)


class FastSoftmax(Softmax):
    """``Softmax`` in place on the one array it creates, sums as products with ones; the mask is
    added as 0 or -inf, which for finite scores gives the same numbers as putting -inf in."""

    def forward(self, x, axis=-1, mask=None):
        xp, self.axis = backend.xp, axis
        if mask is None:
            e = x - _row_max(x, axis)                            # a new array: work in place
        else:   # -inf added where masked: one pass, with the mask's small array broadcast
            e = x + xp.where(mask, x.dtype.type(0), x.dtype.type(-float("inf")))   # (finite x)
            e -= _row_max(e, axis)
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


Softmax.fast = FastSoftmax


class LogSoftmax(Function):
    """y_i = x_i - log Σ_j exp(x_j) along ``axis``.  dL/dx = g - softmax(x) Σ_j g_j."""

    def forward(self, x, axis=-1):
        xp, self.axis = backend.xp, axis
        s = x - _row_max(x, axis)
        total = xp.exp(s).sum(axis=axis, keepdims=True)
        y = s - xp.log(xp.where(total == 0, 1, total))
        self.p = xp.exp(y)                                         # softmax(x); 0 where masked
        self.finite = xp.isfinite(y)
        return y

    def backward(self, grad):
        g = backend.xp.where(self.finite, grad, 0)
        return (g - self.p * g.sum(axis=self.axis, keepdims=True),)
