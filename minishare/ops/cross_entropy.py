"""Cross-entropy loss from logits, PyTorch's ``F.cross_entropy`` convention.

``CrossEntropy`` is the equation; ``FastCrossEntropy`` computes the same numbers in place on the
one (N, C) array it creates, with its row sums as products with ones (see ``minishare.backend``:
the ops' two forms).
"""
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
        self.target = self._checked_targets(logits, target, ignore_index, reduction)
        self.rows = xp.arange(logits.shape[0])
        shifted = logits - logits.max(axis=1, keepdims=True)           # (N, C)
        log_p = shifted - xp.log(xp.exp(shifted).sum(axis=1, keepdims=True))   # log softmax
        self.p = xp.exp(log_p)                                         # softmax, (N, C)
        return self._reduce(-log_p[self.rows, self.target] * self.valid)

    def backward(self, grad):
        onehot = backend.xp.zeros_like(self.p)
        onehot[self.rows, self.target] = 1
        return (self.p - onehot) * self._row_scale(grad)[:, None], None

    def _checked_targets(self, logits, target, ignore_index, reduction):
        """Check the inputs; set ``self.valid`` (N,), the rows that count, and ``self.count``, how
        many (at least 1); return the target ids with ignored or bad ones replaced by 0."""
        xp = backend.xp
        if logits.ndim != 2 or target.shape != logits.shape[:1]:
            raise ValueError(f"cross_entropy: expected logits (N, C) and target (N,), got "
                             f"{tuple(logits.shape)} and {tuple(target.shape)}; reshape "
                             "(B, T, C) logits with .reshape(-1, C) and targets with .reshape(-1)")
        if target.dtype.kind not in "iu":
            raise TypeError(f"cross_entropy: target must hold integer class ids, got {target.dtype}")
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"cross_entropy: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
        C = logits.shape[1]
        self.valid = target != ignore_index                                # (N,)
        in_range = (target >= 0) & (target < C)                            # (N,)
        backend.check((self.valid & ~in_range).any(), lambda: IndexError(
            f"cross_entropy: target ids must lie in [0, {C}) or equal ignore_index={ignore_index}"))
        self.reduction = reduction
        self.count = xp.maximum(self.valid.sum(), 1).astype(logits.dtype)   # on the device: no sync
        return xp.where(self.valid & in_range, target, 0)

    def _reduce(self, losses):
        if self.reduction == "none":
            return losses
        return losses.sum() / self.count if self.reduction == "mean" else losses.sum()

    def _row_scale(self, grad):
        """Each row's factor: the upstream gradient (per row, or shared by the mean or sum), 0 if
        the row is ignored. (N,)"""
        return self.valid * (grad / self.count if self.reduction == "mean" else grad)


class FastCrossEntropy(CrossEntropy):
    """``CrossEntropy`` in place on its one (N, C) array, which holds exp(z - max) from forward to
    backward; backward divides by the row sums in the product it makes anyway."""

    def forward(self, logits, target, ignore_index=-100, reduction="mean"):
        xp = backend.xp
        self.target = safe_target = self._checked_targets(logits, target, ignore_index, reduction)
        N, C = logits.shape
        self.rows = xp.arange(N)
        shifted = logits - logits.max(axis=1, keepdims=True)           # (N, C), a new array
        picked = shifted[self.rows, safe_target]                       # (N,)
        self.e = xp.exp(shifted, out=shifted)                          # in place
        self.total = self.e @ xp.ones(C, dtype=self.e.dtype)           # (N,), Σ_c: one BLAS pass
        return self._reduce((xp.log(self.total) - picked) * self.valid)

    def backward(self, grad):
        scale = self._row_scale(grad)                                  # (N,)
        dz = self.e * (scale / self.total)[:, None]                    # softmax part, (N, C)
        dz[self.rows, self.target] -= scale                            # minus the one-hot part
        return dz, None


CrossEntropy.fast = FastCrossEntropy
