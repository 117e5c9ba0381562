"""The autograd engine: ``Tensor``, ``Function`` and ``backward()``.

A Tensor wraps an array of the backend (``.data``). When a Function (an op) combines tensors that
require gradients, its output remembers the Function, and the Function remembers its inputs (a
computed input as a node without its array, ``_Node``, so that only what backward needs stays in
memory): the computation graph. ``loss.backward()`` walks that graph from the loss back to the
leaves in reverse topological order, asking each Function to map the gradient of its output to
gradients of its inputs (the chain rule), and adds what arrives at a leaf into the leaf's ``.grad``.

Two rules carry the whole course on parameter sharing:

* Gradients accumulate. A tensor used k times receives the sum of the k gradients, which is exactly
  d(loss)/d(shared weight) by the multivariable chain rule.
* A second ``backward()`` without zeroing adds to ``.grad`` again, as PyTorch does (that is how
  gradient accumulation over micro-batches works). Call ``zero_grad()`` between steps. Through
  the *same* graph twice, the first call must say ``retain_graph=True``: by default each op drops
  what it saved for backward as soon as backward has used it (PyTorch's rule, which frees the
  activations layer by layer during backward).

Only leaves (tensors created by the user, such as parameters) keep ``.grad``; gradients of
intermediate results live only while ``backward()`` runs.

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
import contextlib

from minishare import backend

_grad_enabled = True


@contextlib.contextmanager
def no_grad():
    """Inside ``with no_grad():`` ops record no graph (evaluation, optimizer updates)."""
    global _grad_enabled
    previous, _grad_enabled = _grad_enabled, False
    try:
        yield
    finally:
        _grad_enabled = previous


def is_grad_enabled():
    return _grad_enabled


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
        if self.requires_grad and _grad_enabled:
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
        """Accumulate d(self)/d(leaf) into ``leaf.grad`` for every leaf that requires a gradient.

        ``grad`` is the gradient of some final scalar with respect to ``self`` (the cotangent); it
        may be omitted only when ``self`` has one element (then it is 1). As in PyTorch, each op
        drops the arrays it saved for backward once backward has used them, so activations are
        freed layer by layer while backward runs; ``retain_graph=True`` keeps them for a second
        backward through the same graph.
        """
        if not self.requires_grad:
            raise RuntimeError("backward() on a tensor that does not require grad: no input of "
                               "the computation had requires_grad=True (or it ran under no_grad())")
        if grad is None:
            if self.size != 1:
                raise RuntimeError(f"backward() without a gradient needs a one-element tensor, "
                                   f"got shape {self.shape}; pass grad= of that shape")
            grad = backend.xp.ones_like(self.data)
        else:
            grad = (grad.data if isinstance(grad, Tensor) else backend.asarray(grad)).astype(self.dtype, copy=False)
            if tuple(grad.shape) != self.shape:
                raise ValueError(f"backward(): grad has shape {tuple(grad.shape)}, tensor has {self.shape}")

        pending = {id(self): grad}   # gradients of intermediate results, consumed in order
        owned = set()                # pending sums made here: adding into them in place is safe
        for node in reversed(_topological_order(self)):
            g = pending.pop(id(node), None)
            if g is None:
                continue
            if node._ctx is None:            # a leaf (asarray: 0-d results of NumPy are scalars)
                fresh = node.grad is None and id(node) in owned     # a sum made here: no copy
                node.grad = g if fresh else backend.xp.asarray(accumulate(node.grad, g))
                continue
            ctx = node._ctx
            ctx.check_versions(node)
            grads = ctx.backward(g)
            if not retain_graph:
                ctx.release()
            for parent, pg in zip(ctx.inputs, grads):
                if pg is not None and parent.requires_grad:
                    pg = pg.astype(parent.dtype, copy=False)    # a gradient has its tensor's dtype
                    key, total = id(parent), pending.get(id(parent))
                    # no copy for a first gradient: backward functions never write into theirs
                    if total is None:
                        pending[key] = pg
                    elif key in owned:
                        total += pg
                    else:
                        pending[key] = backend.xp.asarray(accumulate(total, pg))   # 0-d: an array
                        owned.add(key)

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


def _describe(t):
    what = "the leaf tensor" if t._ctx is None else f"the result of {type(t._ctx).__name__}"
    return f"{what} of shape {t.shape} ({t.dtype})"


def accumulate(total, grad):
    """The sum rule of reverse mode: a tensor used several times gets the sum of the gradients of
    its uses. (Assigning instead of adding would keep only the last use: sharing would break.)"""
    return grad.copy() if total is None else total + grad


def _topological_order(root):
    """Every tensor the root depends on that requires grad, each after all of its inputs.
    Iterative depth-first search, so deep (many-layer) graphs do not hit Python's recursion limit."""
    order, visited, stack = [], set(), [(root, False)]
    while stack:
        node, inputs_done = stack.pop()
        if inputs_done:
            order.append(node)
            continue
        if id(node) in visited:
            continue
        visited.add(id(node))
        stack.append((node, True))
        if node._ctx is not None:
            stack.extend((p, False) for p in node._ctx.inputs
                         if p.requires_grad and id(p) not in visited)
    return order


class _Node:
    """What the graph keeps of a computed tensor: the op that made it, its version counter, shape
    and dtype, but not its data. An op's inputs are recorded as these, so an intermediate result
    is freed once nothing else refers to it, unless an op saved its array for backward (as in
    PyTorch, whose graph keeps only what backward needs). Leaves are recorded as themselves:
    backward() writes their ``.grad``."""
    requires_grad, grad = True, None

    def __init__(self, tensor):
        self._ctx, self._version = tensor._ctx, tensor._version
        self.shape, self.dtype = tensor.shape, tensor.dtype

    version = property(lambda self: self._version[0])
    is_leaf = False


def _graph_node(t):
    """``t`` itself for a leaf; for a computed tensor its one data-less stand-in (made once, so
    every use of ``t`` is the same node and their gradients add up)."""
    if t._ctx is None:
        return t
    if getattr(t, "_node", None) is None:
        t._node = _Node(t)
    return t._node


class Function:
    """One differentiable op: ``forward`` on arrays, and ``backward`` from the output's gradient
    to one gradient per tensor input (None where there is none), side by side in one class.

    Subclasses implement ``forward(self, *arrays, **options)``, saving on ``self`` what backward
    needs, and ``backward(self, grad)``, which must not write into ``grad`` (it may be shared with
    other gradients, as in PyTorch). ``self.needs_input_grad`` tells forward which inputs will
    want a gradient (None when forward is called directly: then all may). Users call ``SomeOp.apply(*tensors, **options)``; a plain
    Python number among the inputs becomes a constant of the tensors' float dtype, so ``x * 2``
    keeps float32 (or float64) rather than promoting. Arithmetic ops (``arithmetic = True``) also
    give integer and bool operands the float dtype (see the dtype rule in the module docstring).
    """
    arithmetic = False
    released = False          # set once backward() has used and dropped what forward saved
    needs_input_grad = None   # set by apply before forward: per input, whether it needs a gradient

    @classmethod
    def apply(cls, *inputs, **options):
        float_dtype = next((x.dtype for x in inputs if isinstance(x, Tensor) and x.dtype.kind == "f"), None)
        tensors = tuple(x if isinstance(x, Tensor) else
                        Tensor(x, dtype=float_dtype if isinstance(x, (int, float)) else None)
                        for x in inputs)
        if cls.arithmetic and float_dtype is not None:
            tensors = tuple(Tensor(t.data, dtype=float_dtype) if t.dtype.kind in "biu" else t for t in tensors)
        ctx = cls()
        # An op may skip saving, and computing, what only a gradient nobody needs would use
        # (PyTorch's ctx.needs_input_grad): x * 0.5 need not keep x for the constant's gradient.
        ctx.needs_input_grad = tuple(_grad_enabled and t.requires_grad for t in tensors)
        data = ctx.forward(*(t.data for t in tensors), **options)
        requires_grad = _grad_enabled and any(t.requires_grad for t in tensors)
        if not requires_grad:
            return Tensor(data)
        ctx.inputs, ctx.versions = tuple(_graph_node(t) for t in tensors), tuple(t.version for t in tensors)
        return Tensor(data, requires_grad=True, _ctx=ctx)

    def release(self):
        """Drop what forward saved for backward, keeping the graph's shape (inputs, versions)."""
        kept = {"inputs": self.inputs, "versions": self.versions, "released": True}
        self.__dict__.clear()
        self.__dict__.update(kept)

    def check_versions(self, output):
        """Refuse to differentiate with values that changed after this op's forward pass, or
        through an op whose saved arrays a previous backward() freed."""
        if self.released:
            raise RuntimeError(f"backward() through {type(self).__name__} a second time: the first "
                               "backward() freed the arrays it saved; call the first one with "
                               "retain_graph=True, or run the forward pass again")
        changed = [(t, seen) for t, seen in zip(self.inputs, self.versions) if t.version != seen]
        changed += [(output, 0)] if output.version != 0 else []
        for t, seen in changed:
            raise RuntimeError(f"backward(): {_describe(t)}, needed by {type(self).__name__}, was changed "
                               f"in place after the forward pass that saved it (version {t.version}, "
                               f"saved at {seen}); run the forward pass again after changing it")


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


from minishare import ops  # noqa: E402  (ops need Tensor and Function, defined above)
