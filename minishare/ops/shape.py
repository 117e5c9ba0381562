"""Ops that move numbers without changing them: reshape, transpose, indexing, concatenate, stack,
split. Each backward routes the gradient back to where the number came from."""
import itertools

from minishare import backend
from minishare.tensor import Function, Tensor


class Reshape(Function):
    """y = x viewed with a new shape (one entry may be -1). Backward: reshape back."""

    def forward(self, x, shape):
        self.shape = x.shape
        try:
            return x.reshape(shape)
        except ValueError:
            raise ValueError(f"reshape: cannot view a tensor of shape {tuple(x.shape)} "
                             f"({x.size} elements) as {tuple(shape)}") from None

    def backward(self, grad):
        return (grad.reshape(self.shape),)


class Transpose(Function):
    """y = x with its axes permuted, NumPy's convention: ``axes`` lists, for each output axis, the
    input axis it comes from (None reverses them). Backward: the inverse permutation."""

    def forward(self, x, axes=None):
        self.axes = tuple(reversed(range(x.ndim))) if axes is None else tuple(a % x.ndim for a in axes)
        if sorted(self.axes) != list(range(x.ndim)):
            raise ValueError(f"transpose: axes {axes} are not a permutation of {x.ndim} axes")
        return x.transpose(self.axes)

    def backward(self, grad):
        inverse = [0] * len(self.axes)
        for out_axis, in_axis in enumerate(self.axes):
            inverse[in_axis] = out_axis
        return (grad.transpose(inverse),)


class GetItem(Function):
    """y = x[index] for any NumPy index (ints, slices, None, ..., integer or boolean arrays).
    Backward: a zero array with the gradient added at the indexed places. With integer arrays the
    same element can be picked twice, so the adds go through scatter-add, which accumulates."""

    def forward(self, x, index):
        self.shape, self.dtype = x.shape, x.dtype
        self.index = _to_backend(index)
        return x[self.index]

    def backward(self, grad):
        full = backend.xp.zeros(self.shape, dtype=self.dtype)
        backend.xp.add.at(full, self.index, grad)
        return (full,)


def _to_backend(index):
    """Tensors inside an index become their arrays; host integer lists stay Python lists."""
    if isinstance(index, Tensor):
        return index.data
    if isinstance(index, tuple):
        return tuple(_to_backend(i) for i in index)
    return index


class Concatenate(Function):
    """y = the inputs joined along an existing ``axis``: (..., n_i, ...) -> (..., Σ n_i, ...).
    Backward: the gradient cut back into the same pieces."""

    def forward(self, *xs, axis=0):
        self.axis = axis
        self.bounds = list(itertools.accumulate(x.shape[axis] for x in xs))[:-1]
        return backend.xp.concatenate(xs, axis=axis)

    def backward(self, grad):
        return tuple(backend.xp.split(grad, self.bounds, axis=self.axis))


class Stack(Function):
    """y = the inputs, all of one shape S, stacked along a new ``axis``: k × S -> (..., k, ...).
    Backward: the gradient's slices along that axis."""

    def forward(self, *xs, axis=0):
        self.axis = axis
        return backend.xp.stack(xs, axis=axis)

    def backward(self, grad):
        return tuple(backend.xp.moveaxis(grad, self.axis, 0))


def split(x, indices_or_sections, axis=0):
    """NumPy's ``split``: equal sections (an int) or cuts at the given indices; each piece is a
    slice of ``x``, so gradients flow back through GetItem."""
    n = x.shape[axis]
    if isinstance(indices_or_sections, int):
        if n % indices_or_sections:
            raise ValueError(f"split: {n} elements along axis {axis} do not divide into "
                             f"{indices_or_sections} equal sections")
        step = n // indices_or_sections
        cuts = list(range(step, n, step))
    else:
        cuts = list(indices_or_sections)
    bounds = [0] + cuts + [n]
    prefix = (slice(None),) * (axis % x.ndim)
    return tuple(x[prefix + (slice(lo, hi),)] for lo, hi in zip(bounds[:-1], bounds[1:]))
