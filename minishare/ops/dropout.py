"""Dropout (Srivastava et al., 2014), the "inverted" form used by PyTorch."""
from minishare import backend
from minishare.tensor import Function


class Dropout(Function):
    """y = x ⊙ m / (1 - p), m_i ~ Bernoulli(1 - p): each element is zeroed with probability p and
    the survivors scaled so that E[y] = x. dL/dx = g ⊙ m / (1 - p). Shapes: any -> the same.
    The mask comes from ``backend.rng()``, seeded by ``minishare.manual_seed``."""

    def forward(self, x, p):
        keep = backend.rng().random(x.shape, dtype=x.dtype) >= p
        self.scale = keep * x.dtype.type(1 / (1 - p)) if p < 1 else keep * x.dtype.type(0)
        return x * self.scale

    def backward(self, grad):
        return (grad * self.scale,)
