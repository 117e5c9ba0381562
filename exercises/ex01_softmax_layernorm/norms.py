"""Exercise 1: forward and backward of a softmax with a temperature, LayerNorm and RMSNorm, as
minishare Functions.

Each op is a ``minishare.Function``: ``forward`` gets backend arrays and saves on ``self`` what
``backward`` needs; ``backward(grad)`` gets dL/dy and returns one gradient per input, in order.
Use ``backend.xp`` (NumPy here) for the array maths.

Chapter 1 prints the library's plain Softmax; this one has a temperature, whose gradient the
listing does not give. The library's LayerNorm (minishare/ops/) is not printed: do not look at it
before you are done, as with a textbook whose solutions are printed at the back. RMSNorm is new.
"""
from minishare import backend
from minishare.tensor import Function


def softmax_with_temperature(x, tau, axis=-1):
    """Task 1. y = softmax(x / τ) along ``axis`` on backend arrays: y_i = exp(x_i / τ) / Σ_j
    exp(x_j / τ), τ > 0 a 0-d array. Numerically stable: logits of 1000 at τ = 0.01 must not
    overflow, and every row must come out right whatever the other rows hold."""
    ### BEGIN SOLUTION task 1
    xp = backend.xp
    z = x / tau                                                        # (..., n)
    e = xp.exp(z - z.max(axis=axis, keepdims=True))                    # ≤ 1: no overflow
    return e / e.sum(axis=axis, keepdims=True)
    ### END SOLUTION


class SoftmaxWithTemperature(Function):
    """y = softmax(x / τ) along ``axis`` with a learned temperature τ > 0 (one number; CLIP
    learns its logit scale, distillation softens with it).  x (..., n), τ () -> y (..., n).

    ``forward`` is given: it saves x, τ, the axis and y. Task 2: ``backward``, the gradients for
    x *and* for τ from g = dL/dy (derive them from the Jacobian of softmax at z = x / τ, then the
    chain rule through the division); τ's gradient has τ's shape, ().
    """

    def forward(self, x, tau, axis=-1):
        self.x, self.tau, self.axis = x, tau, axis
        self.y = softmax_with_temperature(x, tau, axis)
        return self.y

    def backward(self, grad):
        ### BEGIN SOLUTION task 2
        # through z = x / τ: J = diag(y) - y yᵀ, so gᵀJ = y ⊙ (g - <g, y>) ...
        grad_z = self.y * (grad - (grad * self.y).sum(axis=self.axis, keepdims=True))
        # ... then dz/dx = 1/τ, and dz/dτ = -x/τ², summed over every entry (τ is one number)
        grad_x = grad_z / self.tau
        grad_tau = -(grad_x * self.x).sum() / self.tau                 # a number, like τ
        return grad_x, backend.xp.asarray(grad_tau).reshape(self.tau.shape)
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
