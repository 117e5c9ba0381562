"""The low-rank relaxation of a linear layer: ``LoRALinear`` (Hu et al., 2021, LoRA; Bae et al.,
2024, the relaxation of a shared layer at each position)."""
from minishare.ops.elementwise import sum_rows
from minishare.tensor import Function


class LoRALinear(Function):
    """y = x (W + B A)ᵀ + b = x Wᵀ + (x Aᵀ) Bᵀ + b, PyTorch's layout: x (..., in), W (out, in),
    A (r, in), B (out, r), b (out,) -> y (..., out). The product B A is never formed: the
    correction costs r (in + out) multiply-adds per row, not in · out.

    With g = dL/dy and u = x Aᵀ (the rank-r code of each row)::

        dL/dx = g W + (g B) A      dL/dW = gᵀ x      dL/db = Σ over rows of g
        dL/dA = (g B)ᵀ x           dL/dB = gᵀ u

    W and b may be shared by several positions: each use adds its gradient (autograd's sum rule),
    while A and B belong to one position."""

    def forward(self, x, weight, lora_A, lora_B, bias=None):
        if weight.ndim != 2 or x.shape[-1] != weight.shape[1] or lora_A.shape[1:] != weight.shape[1:] \
                or lora_B.shape != (weight.shape[0], lora_A.shape[0]):
            raise ValueError(f"lora_linear: input {tuple(x.shape)}, weight {tuple(weight.shape)}, "
                             f"lora_A {tuple(lora_A.shape)} and lora_B {tuple(lora_B.shape)} do not fit: "
                             "need x (..., in), W (out, in), A (r, in), B (out, r)")
        self.x2 = x.reshape(-1, x.shape[-1])                      # (rows, in)
        self.u = self.x2 @ lora_A.T                               # (rows, r)
        self.weight, self.lora_A, self.lora_B = weight, lora_A, lora_B
        self.has_bias, self.lead = bias is not None, x.shape[:-1]
        y = self.x2 @ weight.T + self.u @ lora_B.T                # (rows, out)
        if self.has_bias:
            y += bias
        return y.reshape(*self.lead, weight.shape[0])             # (..., out)

    def backward(self, grad):
        g2 = grad.reshape(-1, grad.shape[-1])                     # (rows, out)
        gB = g2 @ self.lora_B                                     # (rows, r): g through B
        grad_x = (g2 @ self.weight + gB @ self.lora_A).reshape(*self.lead, -1)   # (..., in)
        grad_w = g2.T @ self.x2                                   # (out, in)
        grad_A = gB.T @ self.x2                                   # (r, in)
        grad_B = g2.T @ self.u                                    # (out, r)
        grads = (grad_x, grad_w, grad_A, grad_B)
        return grads + (sum_rows(g2),) if self.has_bias else grads
