"""Elementwise nonlinear functions: exp, log, sqrt, tanh, relu, gelu. Shapes: any -> the same."""
import math

from minishare import backend
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
    """

    def forward(self, x, approximate="none"):
        xp, self.x, self.approximate = backend.xp, x, approximate
        if approximate == "tanh":   # in place on one new array: fewer temporaries, same numbers
            t = x * x                                                  # x²
            t *= _C * 0.044715
            t += _C                                                    # √(2/π) (1 + 0.044715 x²)
            t *= x                                                     # u
            self.t = xp.tanh(t, out=t)                                 # t = tanh(u)
            y = t + 1
            y *= x
            y *= 0.5
            return y
        if approximate == "none":
            self.cdf = 0.5 * (1 + backend.erf(x / math.sqrt(2)))
            return x * self.cdf
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")

    def backward(self, grad):
        x = self.x
        if self.approximate == "tanh":
            d = x * x
            d *= _C * 3 * 0.044715
            d += _C                                                    # u'
            d *= x                                                     # x u'
            one_minus_t2 = self.t * self.t
            backend.xp.subtract(1, one_minus_t2, out=one_minus_t2)     # 1 - t²
            d *= one_minus_t2
            d += 1
            d += self.t                                                # 1 + t + x (1 - t²) u'
            d *= 0.5
            d *= grad
            return (d,)
        pdf = backend.xp.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
        return (grad * (self.cdf + x * pdf),)


_C = math.sqrt(2 / math.pi)
