"""Cross-entropy loss from logits, PyTorch's ``F.cross_entropy`` convention."""
from minishare import backend
from minishare.tensor import Function


class CrossEntropy(Function):
    """loss_n = -log softmax(logits_n)[target_n] = log Σ_c exp(z_nc) - z_n,target_n.

    logits (N, C), target (N,) integer class ids -> a scalar (reduction "mean" or "sum") or (N,)
    ("none"). Rows whose target equals ``ignore_index`` (-100 by default: unmasked MLM positions)
    contribute neither loss nor gradient; "mean" averages over the other rows only. If every row is
    ignored the mean is defined as 0 (PyTorch returns NaN), so a batch without targets cannot turn
    training into NaN.  dL/dz_n = (softmax(z_n) - onehot(target_n)) · (upstream gradient).
    """

    def forward(self, logits, target, ignore_index=-100, reduction="mean"):
        xp = backend.xp
        if logits.ndim != 2 or target.shape != logits.shape[:1]:
            raise ValueError(f"cross_entropy: expected logits (N, C) and target (N,), got "
                             f"{tuple(logits.shape)} and {tuple(target.shape)}; reshape "
                             "(B, T, C) logits with .reshape(-1, C) and targets with .reshape(-1)")
        if target.dtype.kind not in "iu":
            raise TypeError(f"cross_entropy: target must hold integer class ids, got {target.dtype}")
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"cross_entropy: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
        N, C = logits.shape
        self.valid = target != ignore_index                            # (N,)
        in_range = (target >= 0) & (target < C)                        # (N,)
        backend.check((self.valid & ~in_range).any(), lambda: IndexError(
            f"cross_entropy: target ids must lie in [0, {C}) or equal ignore_index={ignore_index}"))
        safe_target = xp.where(self.valid & in_range, target, 0)
        rows = xp.arange(N)
        shifted = logits - logits.max(axis=1, keepdims=True)           # (N, C), a new array
        picked = shifted[rows, safe_target]                            # (N,)
        e = xp.exp(shifted, out=shifted)                               # in place
        total = e @ xp.ones(C, dtype=e.dtype)                          # (N,), Σ_c: one BLAS pass
        losses = (xp.log(total) - picked) * self.valid                 # (N,)
        # softmax = e / total: backward divides, in the product it makes anyway (one pass less)
        self.e, self.total, self.rows, self.target = e, total, rows, safe_target
        self.reduction = reduction
        self.count = xp.maximum(self.valid.sum(), 1).astype(logits.dtype)   # on the device: no sync
        if reduction == "none":
            return losses
        return losses.sum() / self.count if reduction == "mean" else losses.sum()

    def backward(self, grad):
        # each row's factor: the upstream gradient (per row, or shared by the mean or sum), 0 if ignored
        scale = grad / self.count if self.reduction == "mean" else grad   # (N,) for "none", else 0-d
        scale = self.valid * scale                                     # (N,)
        dz = self.e * (scale / self.total)[:, None]                    # softmax part, (N, C)
        dz[self.rows, self.target] -= scale                            # minus the one-hot part
        return dz, None
