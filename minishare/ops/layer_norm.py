"""Layer normalization (Ba, Kiros & Hinton, 2016) over the last axis.

``LayerNorm`` is the equation; ``FastLayerNorm`` computes the same numbers with its means as
products with a vector and its arithmetic in place (see ``minishare.backend``: the ops' two forms).
"""
from minishare import backend
from minishare.ops.elementwise import sum_rows
from minishare.tensor import Function


def _check(x, weight, bias):
    if weight.shape != x.shape[-1:] or bias.shape != x.shape[-1:]:
        raise ValueError(f"layer_norm: weight {tuple(weight.shape)} and bias {tuple(bias.shape)} "
                         f"must match the last axis of the input {tuple(x.shape)}")


class LayerNorm(Function):
    """y = (x - μ) / √(σ² + eps) · w + b, with μ and σ² the mean and (biased) variance over the last
    axis. x (..., H), w (H,), b (H,) -> y (..., H).

    With x̂ = (x - μ) · r, r = 1/√(σ² + eps), and ĝ = g ⊙ w (the gradient reaching x̂):
        dL/dx = r (ĝ - mean(ĝ) - x̂ · mean(ĝ ⊙ x̂)),   dL/dw = Σ_rows g ⊙ x̂,   dL/db = Σ_rows g.
    """

    def forward(self, x, weight, bias, eps=1e-5):
        _check(x, weight, bias)
        mu = x.mean(axis=-1, keepdims=True)                                # (..., 1)
        var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)                 # (..., 1)
        self.rstd = 1 / backend.xp.sqrt(var + eps)                         # (..., 1)
        self.x_hat, self.weight = (x - mu) * self.rstd, weight             # (..., H)
        return self.x_hat * weight + bias

    def backward(self, grad):
        x_hat, rows = self.x_hat, tuple(range(grad.ndim - 1))
        g_hat = grad * self.weight                                         # ĝ, (..., H)
        grad_x = self.rstd * (g_hat - g_hat.mean(axis=-1, keepdims=True)
                              - x_hat * (g_hat * x_hat).mean(axis=-1, keepdims=True))
        return grad_x, (grad * x_hat).sum(axis=rows), grad.sum(axis=rows)


class FastLayerNorm(LayerNorm):
    """``LayerNorm`` with its means over the last axis as products with a vector of 1/H (one BLAS
    pass, where NumPy's mean over a short last axis takes several times as long), its sums over
    rows as products with ones, and its arithmetic in place on the arrays it creates."""

    def forward(self, x, weight, bias, eps=1e-5):
        _check(x, weight, bias)
        xp, H = backend.xp, x.shape[-1]
        mean = xp.full(H, 1 / H, dtype=x.dtype)                      # (H,)
        x_hat = x - (x @ mean)[..., None]                            # (..., H), centred for now
        self.rstd = (1 / xp.sqrt(xp.square(x_hat) @ mean + eps))[..., None]   # (..., 1)
        x_hat *= self.rstd                                           # in place: x̂
        self.x_hat, self.weight = x_hat, weight
        y = x_hat * weight
        y += bias
        return y

    def backward(self, grad):
        x_hat, w, H = self.x_hat, self.weight, self.weight.shape[0]
        gx = grad * x_hat                                            # (..., H)
        grad_w = sum_rows(gx.reshape(-1, H))                         # (H,)
        grad_b = sum_rows(grad.reshape(-1, H))                       # (H,)
        # mean(ĝ) and mean(ĝ ⊙ x̂) with ĝ = g ⊙ w, as products with w: no (..., H) temporaries
        mean_g = (grad @ w)[..., None] / H                           # (..., 1)
        mean_gx = (gx @ w)[..., None] / H                            # (..., 1)
        grad_x = grad * w                                            # ĝ
        grad_x -= mean_g
        backend.xp.multiply(x_hat, mean_gx, out=gx)
        grad_x -= gx
        grad_x *= self.rstd
        return grad_x, grad_w, grad_b


LayerNorm.fast = FastLayerNorm
