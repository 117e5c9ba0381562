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
    """``CrossEntropy`` in place on its one (n, C) array, which holds exp(z - max) from forward to
    backward; backward divides by the row sums in the product it makes anyway.

    On the host (the NumPy backend) only the n rows that count are computed: an ignored row's loss
    and gradient are 0 whatever its logits, and an MLM batch with logits at every position ignores
    about 85% of them. Finding those rows reads the targets, which on a GPU would make the host
    wait for the device, so there all N rows are computed (``rows`` None) and the ignored ones are
    multiplied by 0, as in the reference form."""

    def forward(self, logits, target, ignore_index=-100, reduction="mean"):
        xp = backend.xp
        target = self._checked_targets(logits, target, ignore_index, reduction)
        N, C = logits.shape
        self.rows = None
        if backend.name == "numpy" and not self.valid.all():
            self.rows = xp.flatnonzero(self.valid)                     # (n,)
            logits, target = logits[self.rows], target[self.rows]      # (n, C), (n,)
        self.target = target
        shifted = logits - backend.max_along(logits, axis=1)           # (n, C), a new array
        picked = shifted[xp.arange(len(target)), target]               # (n,)
        self.e = xp.exp(shifted, out=shifted)                          # in place
        self.total = self.e @ xp.ones(C, dtype=self.e.dtype)           # (n,), Σ_c: one BLAS pass
        losses = xp.log(self.total) - picked                           # (n,)
        if self.rows is None:
            return self._reduce(losses * self.valid)
        every = xp.zeros(N, dtype=losses.dtype)                        # (N,): 0 where ignored
        every[self.rows] = losses
        return self._reduce(every)

    def backward(self, grad):
        xp = backend.xp
        scale = self._row_scale(grad)                                  # (N,)
        if self.rows is not None:
            scale = scale[self.rows]                                   # (n,)
        dz = self.e * (scale / self.total)[:, None]                    # softmax part, (n, C)
        dz[xp.arange(len(self.target)), self.target] -= scale          # minus the one-hot part
        if self.rows is None:
            return dz, None
        every = xp.zeros((len(self.valid), dz.shape[1]), dtype=dz.dtype)   # (N, C): 0 where ignored
        every[self.rows] = dz
        return every, None


CrossEntropy.fast = FastCrossEntropy
