"""Exercise 1: forward and backward of softmax, LayerNorm and RMSNorm, as minishare Functions.

Each op is a ``minishare.Function``: ``forward`` gets backend arrays and saves on ``self`` what
``backward`` needs; ``backward(grad)`` gets dL/dy and returns one gradient per input, in order.
Use ``backend.xp`` (NumPy here) for the array maths.

The library holds its own Softmax and LayerNorm (minishare/ops/): do not look at them before you
are done, as with a textbook whose solutions are printed at the back. RMSNorm is new.
"""
from minishare import backend
from minishare.tensor import Function


class Softmax(Function):
    """y_i = exp(x_i) / Σ_j exp(x_j) along ``axis``.  x (..., n) -> y (..., n).

    Task 1: forward, numerically stable (logits of 1000 must not overflow).
    Task 2: backward, dL/dx from g = dL/dy (derive it from the Jacobian ∂y_i/∂x_k).
    """

    def forward(self, x, axis=-1):
        ### BEGIN SOLUTION task 1
        xp = backend.xp
        e = xp.exp(x - x.max(axis=axis, keepdims=True))                # ≤ 1: no overflow
        self.axis = axis
        self.y = e / e.sum(axis=axis, keepdims=True)
        return self.y
        ### END SOLUTION

    def backward(self, grad):
        ### BEGIN SOLUTION task 2
        # J = diag(y) - y yᵀ, so gᵀJ = y ⊙ (g - <g, y>)
        inner = (grad * self.y).sum(axis=self.axis, keepdims=True)
        return (self.y * (grad - inner),)
        ### END SOLUTION


class LayerNorm(Function):
    """y = (x - μ) / √(σ² + eps) ⊙ w + b over the last axis (Ba et al., 2016), μ and σ² the mean and
    biased variance of the row.  x (..., H), w (H,), b (H,) -> y (..., H).

    Task 3: forward and backward (gradients for x, w and b).
    """

    def forward(self, x, weight, bias, eps=1e-5):
        ### BEGIN SOLUTION task 3
        xp = backend.xp
        centered = x - x.mean(axis=-1, keepdims=True)                  # (..., H)
        self.rstd = 1 / xp.sqrt((centered ** 2).mean(axis=-1, keepdims=True) + eps)   # (..., 1)
        self.x_hat, self.weight = centered * self.rstd, weight         # (..., H)
        return self.x_hat * weight + bias
        ### END SOLUTION

    def backward(self, grad):
        ### BEGIN SOLUTION task 3
        H = self.x_hat.shape[-1]
        g = grad * self.weight                                         # dL/dx̂, (..., H)
        # x̂ is invariant to shifting and scaling x: project those two directions out of g
        grad_x = self.rstd * (g - g.mean(axis=-1, keepdims=True)
                              - self.x_hat * (g * self.x_hat).mean(axis=-1, keepdims=True))
        grad_w = (grad * self.x_hat).reshape(-1, H).sum(axis=0)        # (H,)
        grad_b = grad.reshape(-1, H).sum(axis=0)                       # (H,)
        return grad_x, grad_w, grad_b
        ### END SOLUTION


class RMSNorm(Function):
    """y = x / √(mean(x²) + eps) ⊙ w over the last axis (Zhang & Sennrich, 2019): LayerNorm without
    the centring and without the bias.  x (..., H), w (H,) -> y (..., H).

    Task 4: forward and backward (gradients for x and w).
    """

    def forward(self, x, weight, eps=1e-6):
        ### BEGIN SOLUTION task 4
        xp = backend.xp
        self.r = 1 / xp.sqrt((x * x).mean(axis=-1, keepdims=True) + eps)   # (..., 1)
        self.x_hat, self.weight = x * self.r, weight                   # (..., H)
        return self.x_hat * weight
        ### END SOLUTION

    def backward(self, grad):
        ### BEGIN SOLUTION task 4
        H = self.x_hat.shape[-1]
        g = grad * self.weight                                         # dL/dx̂
        grad_x = self.r * (g - self.x_hat * (g * self.x_hat).mean(axis=-1, keepdims=True))
        return grad_x, (grad * self.x_hat).reshape(-1, H).sum(axis=0)
        ### END SOLUTION
