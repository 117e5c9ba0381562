"""Elementwise nonlinear functions: exp, log, sqrt, tanh, relu, gelu. Shapes: any -> the same."""
import math

from minishare import backend
from minishare.ops.blocks import elementwise_in_blocks
from minishare.tensor import Function


class Exp(Function):
    """y = exp(x).  dy/dx = exp(x) = y."""

    def forward(self, x):
        self.y = backend.xp.exp(x)
        return self.y

    def backward(self, grad):
        return (grad * self.y,)


class Log(Function):
    """y = log(x).  dy/dx = 1/x."""

    def forward(self, x):
        self.x = x
        return backend.xp.log(x)

    def backward(self, grad):
        return (grad / self.x,)


class Sqrt(Function):
    """y = sqrt(x).  dy/dx = 1 / (2 sqrt(x)) = 1 / (2y)."""

    def forward(self, x):
        self.y = backend.xp.sqrt(x)
        return self.y

    def backward(self, grad):
        return (grad / (2 * self.y),)


class Tanh(Function):
    """y = tanh(x).  dy/dx = 1 - y²."""

    def forward(self, x):
        self.y = backend.xp.tanh(x)
        return self.y

    def backward(self, grad):
        return (grad * (1 - self.y * self.y),)


class ReLU(Function):
    """y = max(x, 0).  dy/dx = 1 where x > 0, else 0 (the subgradient 0 at x = 0)."""

    def forward(self, x):
        self.positive = x > 0
        return x * self.positive

    def backward(self, grad):
        return (grad * self.positive,)


class GELU(Function):
    """The Gaussian Error Linear Unit (Hendrycks & Gimpel, 2016): y = x Φ(x), Φ the standard normal
    CDF. ::

        approximate="none":  Φ(x) = (1 + erf(x / √2)) / 2,   dy/dx = Φ(x) + x φ(x), φ(x) = exp(-x²/2)/√(2π)
        approximate="tanh":  y = x (1 + tanh(u)) / 2 with u = √(2/π) (x + 0.044715 x³), BERT's and
                             ALBERT's "gelu_new";  dy/dx = (1 + t)/2 + x (1 - t²) u'/2, t = tanh(u),
                             u' = √(2/π) (1 + 3 · 0.044715 x²).

    dy/dx depends on x alone, so forward computes it and saves it instead of x: one saved array
    (as many as PyTorch, which saves x and recomputes), and backward is one product.
    """

    def forward(self, x, approximate="none"):
        if approximate not in ("none", "tanh"):
            raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
        xp, need_grad = backend.xp, self.needs_input_grad is None or self.needs_input_grad[0]
        if approximate == "tanh":
            t = xp.tanh(_C * (x + 0.044715 * x ** 3))
            y = 0.5 * x * (1 + t)
            self.dydx = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _C * (1 + 3 * 0.044715 * x ** 2)
        else:
            cdf = 0.5 * (1 + backend.erf(x / math.sqrt(2)))
            y = x * cdf
            self.dydx = cdf + x * xp.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
        if not need_grad:
            self.dydx = None
        return y

    def backward(self, grad):
        return (grad * self.dydx,)


class FastGELU(GELU):
    """``GELU`` in cache-sized blocks (``minishare.ops.blocks``), in place on the arrays it creates;
    forward skips dy/dx when no gradient is wanted."""

    def forward(self, x, approximate="none"):
        if approximate not in ("none", "tanh"):
            raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
        need_grad = self.needs_input_grad is None or self.needs_input_grad[0]
        gelu = _gelu_tanh if approximate == "tanh" else _gelu_erf
        y, self.dydx = elementwise_in_blocks(lambda block: gelu(block, need_grad), x)
        return y


GELU.fast = FastGELU


def _gelu_tanh(x, need_grad):
    """y and (if ``need_grad``) dy/dx of the tanh GELU, in place on new arrays: few passes. With
    h = (1 + t)/2, y = x h, and as 1 - t² = (1 - t)(1 + t), dy/dx = h (1 + x u' (1 - t)).

    h is NumPy's tanh, not the logistic 1 / (1 + exp(-2u)) it equals: that form is faster where the
    CPU lacks AVX-512 (there NumPy's float32 tanh is a libm call an element), but it rounds
    differently, and a few hundred updates later the book's results would no longer be the
    ones a rerun of ``reproduce`` prints."""
    xp = backend.xp
    x2 = x * x                                                     # x²
    h = x2 * (_C * 0.044715)
    h += _C                                                        # √(2/π) (1 + 0.044715 x²)
    h *= x                                                         # u
    xp.tanh(h, out=h)                                              # t
    h += 1
    h *= 0.5                                                       # h = (1 + t)/2
    y = x * h
    if not need_grad:
        return y, None
    d = x2                                                         # x² is not needed again
    d *= 2 * _C * 3 * 0.044715
    d += 2 * _C                                                    # 2u'
    d *= x
    d *= 1 - h                                                     # 2 x u' (1 - h) = x u' (1 - t)
    d += 1
    d *= h                                                         # h (1 + x u' (1 - t))
    return y, d


def _gelu_erf(x, need_grad):
    cdf = 0.5 * (1 + backend.erf(x / math.sqrt(2)))
    y = x * cdf
    if not need_grad:
        return y, None
    pdf = backend.xp.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    return y, cdf + x * pdf


_C = math.sqrt(2 / math.pi)
