"""Reverse mode: ``Function`` (one op, forward and backward side by side), the topological order
of the graph, and ``backward``, which walks it from a result back to the leaves.

When a Function combines tensors that require gradients, its output remembers the Function, and
the Function remembers its inputs (a computed input as a node without its array, ``_Node``, so
that only what backward needs stays in memory): the computation graph. ``backward(root)`` walks
that graph from the root back to the leaves in reverse topological order, asking each Function to
map the gradient of its output to gradients of its inputs (the chain rule), and adds what arrives
at a leaf into the leaf's ``.grad``. Every sum of gradients goes through ``accumulate``.

Two rules carry the whole course on parameter sharing:

* Gradients accumulate. A tensor used k times receives the sum of the k gradients, which is exactly
  d(loss)/d(shared weight) by the multivariable chain rule.
* A second ``backward()`` without zeroing adds to ``.grad`` again, as PyTorch does (that is how
  gradient accumulation over micro-batches works). Call ``zero_grad()`` between steps. Through
  the *same* graph twice, the first call must say ``retain_graph=True``: by default each op drops
  what it saved for backward as soon as backward has used it (PyTorch's rule, which frees the
  activations layer by layer during backward).

Only leaves (tensors created by the user, such as parameters) keep ``.grad``; gradients of
intermediate results live only while ``backward()`` runs. An op records the versions of its
inputs, and ``backward()`` raises, naming the tensor, if one changed in place since (the version
counter of ``minishare.tensor``): the gradient would silently use the new values.
"""
import contextlib

from minishare import backend
from minishare.tensor import Tensor

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


# ---- the walk ---------------------------------------------------------------------------------
def accumulate(total, grad):
    """The sum rule of reverse mode: a tensor used several times gets the sum of the gradients of
    its uses. (Assigning instead of adding would keep only the last use: sharing would break.)
    ``total`` is None before the first use; the first gradient is then the total as it is, not
    a copy: no backward writes into a gradient it was given, so one array may serve several."""
    total = grad if total is None else total + grad
    return backend.xp.asarray(total)   # NumPy makes a 0-d sum a scalar; a gradient is an array


def topological_order(root):
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


def backward(root, grad=None, retain_graph=False):
    """Accumulate d(root)/d(leaf) into ``leaf.grad`` for every leaf that requires a gradient
    (``Tensor.backward``, which explains ``grad`` and ``retain_graph``)."""
    pending = {id(root): _first_gradient(root, grad)}   # d(root)/d(node), summed over its uses
    for node in reversed(topological_order(root)):
        g = pending.pop(id(node), None)
        if g is None:
            continue
        if node._ctx is None:                     # a leaf keeps the sum in .grad, an array of its own
            node.grad = accumulate(node.grad, g.copy())   # (g may be shared, or a broadcast view)
            continue
        node._ctx.check_versions(node)
        grads = node._ctx.backward(g)             # the chain rule, one op at a time
        if not retain_graph:
            node._ctx.release()
        for parent, pg in zip(node._ctx.inputs, grads):
            if pg is not None and parent.requires_grad:
                pg = pg.astype(parent.dtype, copy=False)    # a gradient has its tensor's dtype
                pending[id(parent)] = accumulate(pending.get(id(parent)), pg)


def _first_gradient(root, grad):
    """The cotangent backward starts from, as an array of the root's shape and dtype."""
    if not root.requires_grad:
        raise RuntimeError("backward() on a tensor that does not require grad: no input of "
                           "the computation had requires_grad=True (or it ran under no_grad())")
    if grad is None:
        if root.size != 1:
            raise RuntimeError(f"backward() without a gradient needs a one-element tensor, "
                               f"got shape {root.shape}; pass grad= of that shape")
        return backend.xp.ones_like(root.data)
    grad = (grad.data if isinstance(grad, Tensor) else backend.asarray(grad)).astype(root.dtype, copy=False)
    if tuple(grad.shape) != root.shape:
        raise ValueError(f"backward(): grad has shape {tuple(grad.shape)}, tensor has {root.shape}")
    return grad


# ---- the graph's nodes and ops ----------------------------------------------------------------
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

    An op whose readable form is slow names a subclass as its ``fast`` form: the same equation,
    computed with fewer passes. ``apply`` runs the fast form unless
    ``backend.use_reference_ops(True)`` asked for the reference forms, the ones the book lists.
    """
    arithmetic = False
    fast = None               # the fast form of this op, a subclass (None: this form is the one)
    released = False          # set once backward() has used and dropped what forward saved
    needs_input_grad = None   # set by apply before forward: per input, whether it needs a gradient

    def __init_subclass__(cls, **kwargs):
        """A subclass does not inherit its parent's fast form: ``class MySoftmax(Softmax)`` with a
        backward of its own runs that backward, not ``FastSoftmax``'s."""
        super().__init_subclass__(**kwargs)
        cls.fast = cls.__dict__.get("fast")

    @classmethod
    def apply(cls, *inputs, **options):
        float_dtype = next((x.dtype for x in inputs if isinstance(x, Tensor) and x.dtype.kind == "f"), None)
        tensors = tuple(x if isinstance(x, Tensor) else
                        Tensor(x, dtype=float_dtype if isinstance(x, (int, float)) else None)
                        for x in inputs)
        if cls.arithmetic and float_dtype is not None:
            tensors = tuple(Tensor(t.data, dtype=float_dtype) if t.dtype.kind in "biu" else t for t in tensors)
        ctx = cls() if cls.fast is None or backend.reference_ops else cls.fast()
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


def _describe(t):
    what = "the leaf tensor" if t._ctx is None else f"the result of {type(t._ctx).__name__}"
    return f"{what} of shape {t.shape} ({t.dtype})"
