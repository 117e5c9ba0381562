"""Matrix products: ``matmul`` (batched and broadcast, as NumPy's ``@``) and ``linear``."""
from minishare.ops.elementwise import sum_rows, unbroadcast
from minishare.tensor import Function


def _swap(m):
    return m.swapaxes(-1, -2)


class MatMul(Function):
    """C = A @ B with A (..., n, k) and B (..., k, m) -> C (..., n, m); leading (batch) axes
    broadcast. dL/dA = dL/dC @ Bᵀ, dL/dB = Aᵀ @ dL/dC, each summed over the axes it was broadcast
    along. Both inputs need at least two dimensions (write a vector as a 1 × k or k × 1 matrix)."""
    arithmetic = True

    def forward(self, a, b):
        if a.ndim < 2 or b.ndim < 2 or a.shape[-1] != b.shape[-2]:
            raise ValueError(f"matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} do not fit: "
                             "need (..., n, k) @ (..., k, m), each with at least 2 dimensions")
        self.a, self.b = a, b
        return a @ b

    def backward(self, grad):
        a, b = self.a, self.b
        if b.ndim == 2:   # one matrix for the whole batch: fold the batch axes into the rows
            grad_b = a.reshape(-1, a.shape[-1]).T @ grad.reshape(-1, grad.shape[-1])  # (k, m)
        else:
            grad_b = unbroadcast(_swap(a) @ grad, b.shape)
        return unbroadcast(grad @ _swap(b), a.shape), grad_b


class Linear(Function):
    """y = x Wᵀ + b, PyTorch's layout: x (..., in), W (out, in), b (out,) -> y (..., out).
    dL/dx = dL/dy W;  dL/dW = Σ over rows of dL/dyᵀ x;  dL/db = Σ over rows of dL/dy."""

    def forward(self, x, weight, bias=None):
        if weight.ndim != 2 or x.shape[-1] != weight.shape[1]:
            raise ValueError(f"linear: input of shape {tuple(x.shape)} does not fit a weight of "
                             f"shape {tuple(weight.shape)} (out_features, in_features)")
        # Rows are folded into one matrix: a single 2-D product is much faster in BLAS than a
        # stack of small ones.
        self.x2 = x.reshape(-1, x.shape[-1])                  # (rows, in)
        self.weight, self.has_bias, self.lead = weight, bias is not None, x.shape[:-1]
        y = self.x2 @ weight.T                                # (rows, out)
        if self.has_bias:
            y += bias
        return y.reshape(*self.lead, weight.shape[0])         # (..., out)

    def backward(self, grad):
        g2 = grad.reshape(-1, grad.shape[-1])                 # (rows, out)
        grad_x = (g2 @ self.weight).reshape(*self.lead, -1)   # (..., in)
        grad_w = g2.T @ self.x2                               # (out, in)
        return (grad_x, grad_w, sum_rows(g2)) if self.has_bias else (grad_x, grad_w)
