"""Layer normalization (Ba, Kiros & Hinton, 2016) over the last axis."""
from minishare import backend
from minishare.tensor import Function


class LayerNorm(Function):
    """y = (x - μ) / √(σ² + eps) · w + b, with μ and σ² the mean and (biased) variance over the last
    axis. x (..., H), w (H,), b (H,) -> y (..., H).

    With x̂ = (x - μ) · r, r = 1/√(σ² + eps), and ĝ = g ⊙ w (the gradient reaching x̂):
        dL/dx = r (ĝ - mean(ĝ) - x̂ · mean(ĝ ⊙ x̂)),   dL/dw = Σ_rows g ⊙ x̂,   dL/db = Σ_rows g.
    """

    def forward(self, x, weight, bias, eps=1e-5):
        if weight.shape != x.shape[-1:] or bias.shape != x.shape[-1:]:
            raise ValueError(f"layer_norm: weight {tuple(weight.shape)} and bias {tuple(bias.shape)} "
                             f"must match the last axis of the input {tuple(x.shape)}")
        xp = backend.xp
        mu = x.mean(axis=-1, keepdims=True)                          # (..., 1)
        centered = x - mu                                            # (..., H)
        self.rstd = 1 / xp.sqrt((centered * centered).mean(axis=-1, keepdims=True) + eps)
        self.x_hat = centered * self.rstd                            # (..., H)
        self.weight = weight
        return self.x_hat * weight + bias

    def backward(self, grad):
        x_hat, H = self.x_hat, self.x_hat.shape[-1]
        g_hat = grad * self.weight                                   # (..., H)
        grad_x = self.rstd * (g_hat - g_hat.mean(axis=-1, keepdims=True)
                              - x_hat * (g_hat * x_hat).mean(axis=-1, keepdims=True))
        grad_w = (grad * x_hat).reshape(-1, H).sum(axis=0)           # (H,)
        grad_b = grad.reshape(-1, H).sum(axis=0)                     # (H,)
        return grad_x, grad_w, grad_b
