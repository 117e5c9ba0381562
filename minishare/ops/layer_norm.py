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
        x_hat = x - mu                                               # (..., H), centred for now
        self.rstd = 1 / xp.sqrt(xp.square(x_hat).mean(axis=-1, keepdims=True) + eps)   # (..., 1)
        x_hat *= self.rstd                                           # in place: x̂
        self.x_hat, self.weight = x_hat, weight
        y = x_hat * weight
        y += bias
        return y

    def backward(self, grad):
        x_hat, w, H = self.x_hat, self.weight, self.weight.shape[0]
        gx = grad * x_hat                                            # (..., H)
        grad_w = gx.reshape(-1, H).sum(axis=0)                       # (H,)
        grad_b = grad.reshape(-1, H).sum(axis=0)                     # (H,)
        # mean(ĝ) and mean(ĝ ⊙ x̂) with ĝ = g ⊙ w, as products with w: no (..., H) temporaries
        mean_g = (grad @ w)[..., None] / H                           # (..., 1)
        mean_gx = (gx @ w)[..., None] / H                            # (..., 1)
        grad_x = grad * w                                            # ĝ
        grad_x -= mean_g
        backend.xp.multiply(x_hat, mean_gx, out=gx)
        grad_x -= gx
        grad_x *= self.rstd
        return grad_x, grad_w, grad_b
