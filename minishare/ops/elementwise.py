"""Elementwise arithmetic with NumPy broadcasting: add, sub, mul, div, neg, pow, where.

Broadcasting in the forward pass copies an input along new or size-1 axes; the matching backward
sums the gradient over exactly those axes (:func:`unbroadcast`), so every input receives a gradient
of its own shape. A bias of shape (H,) added to activations of shape (B, T, H) gets the sum over
B and T: each copy of the bias contributed, and contributions add.
"""
from minishare import backend
from minishare.tensor import Function


def unbroadcast(grad, shape):
    """Sum ``grad`` down to ``shape``: over the leading axes broadcasting added, and over the axes
    where ``shape`` has size 1."""
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def sum_rows(a):
    """The column sums of a 2-D array, (R, C) -> (C,). The fast form is the product ones(R) @ a:
    BLAS reads a row-major array in one pass, where NumPy's sum down its columns took 3 to 8 times
    as long at the course's shapes (a bias's gradient: 2048 rows of 64). The reference form
    (``backend.use_reference_ops``) is the sum."""
    if backend.reference_ops:
        return a.sum(axis=0)
    return backend.xp.ones(a.shape[0], dtype=a.dtype) @ a


class Add(Function):
    """c = a + b (broadcast).  dc/da = 1, dc/db = 1."""
    arithmetic = True

    def forward(self, a, b):
        self.shapes = a.shape, b.shape
        return a + b

    def backward(self, grad):
        return unbroadcast(grad, self.shapes[0]), unbroadcast(grad, self.shapes[1])


class Sub(Function):
    """c = a - b (broadcast).  dc/da = 1, dc/db = -1."""
    arithmetic = True

    def forward(self, a, b):
        self.shapes = a.shape, b.shape
        return a - b

    def backward(self, grad):
        return unbroadcast(grad, self.shapes[0]), unbroadcast(-grad, self.shapes[1])


class Mul(Function):
    """c = a * b (broadcast).  dc/da = b, dc/db = a."""
    arithmetic = True

    def forward(self, a, b):
        need = self.needs_input_grad or (True, True)
        self.shapes = a.shape, b.shape
        self.a = a if need[1] else None           # a is needed only for b's gradient
        self.b = b if need[0] else None
        return a * b

    def backward(self, grad):
        return (None if self.b is None else unbroadcast(grad * self.b, self.shapes[0]),
                None if self.a is None else unbroadcast(grad * self.a, self.shapes[1]))


class Div(Function):
    """c = a / b (broadcast).  dc/da = 1/b, dc/db = -a/b² = -c/b."""
    arithmetic = True

    def forward(self, a, b):
        self.a_shape, self.b, self.c = a.shape, b, a / b
        return self.c

    def backward(self, grad):
        grad_a = grad / self.b
        return unbroadcast(grad_a, self.a_shape), unbroadcast(-grad_a * self.c, self.b.shape)


class Neg(Function):
    """c = -a.  dc/da = -1."""

    def forward(self, a):
        return -a

    def backward(self, grad):
        return (-grad,)


class Pow(Function):
    """c = a ** p for a constant number p.  dc/da = p * a ** (p - 1)."""

    def forward(self, a, exponent):
        if not isinstance(exponent, (int, float)):
            raise TypeError(f"pow: the exponent must be a Python number, got {type(exponent).__name__}")
        self.a, self.p = a, exponent
        return a ** exponent

    def backward(self, grad):
        return (grad * self.p * self.a ** (self.p - 1),)


class Where(Function):
    """c = a where cond else b (broadcast); cond is a boolean array, not differentiated.
    dc/da = cond, dc/db = not cond."""

    def forward(self, cond, a, b):
        self.cond, self.shapes = cond, (a.shape, b.shape)
        return backend.xp.where(cond, a, b)

    def backward(self, grad):
        xp, need = backend.xp, self.needs_input_grad or (False, True, True)
        zero = xp.zeros((), dtype=grad.dtype)
        return (None,
                unbroadcast(xp.where(self.cond, grad, zero), self.shapes[0]) if need[1] else None,
                unbroadcast(xp.where(self.cond, zero, grad), self.shapes[1]) if need[2] else None)
