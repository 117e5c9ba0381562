"""Reductions over axes, NumPy style (``axis=None`` means all axes; ``keepdims``): sum, max, and
mean and var composed from them. Shapes: (..., n, ...) -> (..., ...) or (..., 1, ...) with keepdims.
"""
from minishare import backend
from minishare.tensor import Function


def normalize_axes(axis, ndim):
    """``axis`` (None, an int or a tuple, negative allowed) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} is out of range for a tensor with {ndim} dimensions")
    return tuple(sorted(a % ndim for a in axes))


def expand_to(grad, axes, shape):
    """Undo a reduction's shape: put the reduced ``axes`` back (size 1), then broadcast to ``shape``."""
    return backend.xp.broadcast_to(backend.xp.expand_dims(grad, axes), shape) if axes else grad


class Sum(Function):
    """y = Σ over ``axis`` of x.  dy/dx = 1: the gradient is copied back along the summed axes."""

    def forward(self, x, axis=None, keepdims=False):
        self.shape, self.axes = x.shape, normalize_axes(axis, x.ndim)
        return x.sum(axis=self.axes, keepdims=keepdims)

    def backward(self, grad):
        axes = self.axes if grad.ndim < len(self.shape) else ()
        return (backend.xp.broadcast_to(expand_to(grad, axes, self.shape), self.shape),)


class Max(Function):
    """y = max over ``axis`` of x.  dy/dx = 1 at the maximum, 0 elsewhere; tied maxima share the
    gradient equally (a valid subgradient that keeps the total)."""

    def forward(self, x, axis=None, keepdims=False):
        self.axes = normalize_axes(axis, x.ndim)
        y = x.max(axis=self.axes, keepdims=True)
        self.is_max = x == y
        self.count = self.is_max.sum(axis=self.axes, keepdims=True).astype(x.dtype)  # not int: keeps float32
        return y if keepdims else y.squeeze(self.axes)

    def backward(self, grad):
        if grad.ndim < self.is_max.ndim:
            grad = backend.xp.expand_dims(grad, self.axes)
        return (self.is_max * (grad / self.count),)


def mean(x, axis=None, keepdims=False):
    """Arithmetic mean over ``axis``: sum / count (the backward of Sum does the rest)."""
    axes = normalize_axes(axis, x.ndim)
    count = 1
    for a in axes:
        count *= x.shape[a]
    return Sum.apply(x, axis=axes, keepdims=keepdims) / count


def var(x, axis=None, keepdims=False, ddof=0):
    """Variance over ``axis``: mean((x - mean(x))²) · n / (n - ddof). ``ddof=0`` as NumPy's default
    (PyTorch's ``var`` defaults to ddof=1)."""
    axes = normalize_axes(axis, x.ndim)
    n = 1
    for a in axes:
        n *= x.shape[a]
    centered = x - mean(x, axis=axes, keepdims=True)
    return Sum.apply(centered * centered, axis=axes, keepdims=keepdims) / (n - ddof)
