"""``Tensor``: an array of the backend with an optional gradient, and its operators.

A Tensor wraps an array (``.data``). Computing with tensors through the ops (``minishare.ops``;
``+``, ``@``, ``.sum()`` are shorthands) records the computation graph that ``backward()`` walks
(``minishare.autograd``, which holds ``Function``, the topological order and the walk, re-exported
here).

Two guarantees PyTorch users rely on:

* A version counter. Every in-place change made through a tensor (assigning or augmenting
  ``t.data``, ``t[i] = v``, ``add_``, ``mul_``, ``zero_``, ``copy_``; an optimizer step) bumps its
  version; an op records the versions of its inputs, and ``backward()`` raises, naming the tensor,
  if one changed since: the gradient would silently use the new values. (Writing into the array,
  ``t.data[i] = v``, bypasses the counter, as ``tensor.data`` does in PyTorch.)
* dtypes, PyTorch's rule. Integer and bool operands of arithmetic never widen a float: float32
  times int64 is float32. Two floats give the wider one (float32 times float64 is float64). A
  gradient always has the dtype of the tensor it belongs to, so a float32 parameter gets a float32
  gradient, and stays float32 through an optimizer step, whatever the dtype of the data.
"""
from minishare import backend


class Tensor:
    """An array with an optional gradient and, if it was computed, the op that made it.

    ``data``          the backend array (NumPy, CuPy or strict)
    ``grad``          an array of the same shape and backend, or None until backward() reaches it
    ``requires_grad`` whether backward() should compute a gradient for it
    """

    __array_ufunc__ = None    # ``array * tensor``: NumPy defers to Tensor.__rmul__ (no object array)

    def __init__(self, data, requires_grad=False, dtype=None, _ctx=None):
        if isinstance(data, Tensor):
            data = data.data
        self._data = backend.asarray(data, dtype=dtype)
        if self._data.dtype.kind not in "biuf":
            raise TypeError(f"tensors hold numbers (bool, int, float), got dtype {self._data.dtype}")
        if requires_grad and self._data.dtype.kind != "f":
            raise TypeError(f"only floating-point tensors can require gradients, got {self._data.dtype}")
        self.requires_grad = requires_grad
        self.grad = None
        self._ctx = _ctx          # the Function that produced this tensor (None for a leaf)
        self._version = [0]       # a box, shared with detach()ed tensors of the same data

    @property
    def data(self):
        return self._data

    @data.setter
    def data(self, array):
        """Assigning (or ``+=``, which assigns) counts as an in-place change: see the version counter."""
        self._data = array
        self._version[0] += 1

    @property
    def version(self):
        """How many times this tensor's data was changed in place."""
        return self._version[0]

    # --- array attributes -------------------------------------------------------------------
    shape = property(lambda self: tuple(self.data.shape))
    ndim = property(lambda self: self.data.ndim)
    dtype = property(lambda self: self.data.dtype)
    size = property(lambda self: int(self.data.size))
    is_leaf = property(lambda self: self._ctx is None)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __bool__(self):
        if self.size != 1:
            count = "no values" if self.size == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {count} is ambiguous")
        return bool(self.data.item())

    def __repr__(self):
        grad = ", requires_grad=True" if self.requires_grad else ""
        return f"tensor({self.data!r}{grad})"

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self.size != 1:
            raise ValueError(f"item() needs a tensor with one element, got shape {self.shape}")
        return self.data.item()

    def numpy(self):
        """A host NumPy copy of the data (an explicit device -> host transfer on a GPU)."""
        return backend.to_numpy(self.data)

    def detach(self):
        """The same data, cut from the graph: no gradient flows back through the result. It
        shares the version counter, so an in-place change through it is seen by backward()."""
        result = Tensor(self.data)
        result._version = self._version
        return result

    # --- in-place changes (each bumps the version) --------------------------------------------
    def _in_place(self, op):
        if self.requires_grad and autograd.is_grad_enabled():
            raise RuntimeError("in-place change of a tensor that requires grad: the graph would not "
                               "know of it; do it under minishare.no_grad()")
        op(self._data)
        self._version[0] += 1
        return self

    def __setitem__(self, index, value):
        self._in_place(lambda a: a.__setitem__(index, _array(value)))

    def add_(self, other):
        return self._in_place(lambda a: a.__iadd__(_array(other)))

    def mul_(self, other):
        return self._in_place(lambda a: a.__imul__(_array(other)))

    def zero_(self):
        return self._in_place(lambda a: a.fill(0))

    def copy_(self, source):
        return self._in_place(lambda a: a.__setitem__(Ellipsis, _array(source)))

    # --- backward -----------------------------------------------------------------------------
    def backward(self, grad=None, retain_graph=False):
        """Accumulate d(self)/d(leaf) into ``leaf.grad`` for every leaf that requires a gradient
        (the walk is ``minishare.autograd.backward``).

        ``grad`` is the gradient of some final scalar with respect to ``self`` (the cotangent); it
        may be omitted only when ``self`` has one element (then it is 1). As in PyTorch, each op
        drops the arrays it saved for backward once backward has used them, so activations are
        freed layer by layer while backward runs; ``retain_graph=True`` keeps them for a second
        backward through the same graph.
        """
        autograd.backward(self, grad, retain_graph)

    # --- operators (the ops live in minishare.ops; these are shorthands) --------------------
    def __add__(self, other): return ops.Add.apply(self, other)
    def __radd__(self, other): return ops.Add.apply(other, self)
    def __sub__(self, other): return ops.Sub.apply(self, other)
    def __rsub__(self, other): return ops.Sub.apply(other, self)
    def __mul__(self, other): return ops.Mul.apply(self, other)
    def __rmul__(self, other): return ops.Mul.apply(other, self)
    def __truediv__(self, other): return ops.Div.apply(self, other)
    def __rtruediv__(self, other): return ops.Div.apply(other, self)
    def __neg__(self): return ops.Neg.apply(self)
    def __pow__(self, exponent): return ops.Pow.apply(self, exponent=exponent)
    def __matmul__(self, other): return ops.MatMul.apply(self, other)
    def __rmatmul__(self, other): return ops.MatMul.apply(other, self)
    def __getitem__(self, index): return ops.GetItem.apply(self, index=index)

    def sum(self, axis=None, keepdims=False): return ops.Sum.apply(self, axis=axis, keepdims=keepdims)
    def mean(self, axis=None, keepdims=False): return ops.mean(self, axis=axis, keepdims=keepdims)
    def max(self, axis=None, keepdims=False): return ops.Max.apply(self, axis=axis, keepdims=keepdims)
    def var(self, axis=None, keepdims=False, ddof=0): return ops.var(self, axis, keepdims, ddof)
    def exp(self): return ops.Exp.apply(self)
    def log(self): return ops.Log.apply(self)
    def sqrt(self): return ops.Sqrt.apply(self)
    def tanh(self): return ops.Tanh.apply(self)
    def relu(self): return ops.ReLU.apply(self)

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return ops.Reshape.apply(self, shape=tuple(shape))

    def transpose(self, *axes):
        axes = axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes
        return ops.Transpose.apply(self, axes=tuple(axes) if axes else None)

    @property
    def T(self):
        return self.transpose()


def _array(value):
    return value.data if isinstance(value, Tensor) else value


def tensor(data, requires_grad=False, dtype=None):
    """Make a leaf tensor holding a copy of ``data``, as ``torch.tensor`` does: changing the
    array later does not change the tensor. Python floats (and lists of them) become float32;
    arrays keep their dtype, so ``tensor(np.ones(3))`` is float64."""
    data = data.data if isinstance(data, Tensor) else data
    return Tensor(backend.asarray(data, dtype=dtype).copy(), requires_grad=requires_grad)


def as_tensor(data, dtype=None):
    """A tensor on ``data`` without copying when it already is an array of the active backend
    with that dtype (``torch.as_tensor``): changes to the array show in the tensor."""
    return Tensor(data, dtype=dtype)


# autograd and the ops need Tensor, defined above; Function, no_grad and accumulate are re-exported
from minishare import autograd  # noqa: E402
from minishare.autograd import Function, accumulate, is_grad_enabled, no_grad  # noqa: E402,F401
from minishare import ops  # noqa: E402
