"""Embedding lookup: rows of a weight matrix picked by integer ids."""
from minishare import backend
from minishare.tensor import Function


class Embedding(Function):
    """y[..., :] = W[ids[...], :].  ids (...) integers in [0, V), W (V, E) -> y (..., E).

    Backward scatter-adds each output row's gradient into the row of W it came from; an id that
    appears k times collects the sum of k gradients (a plain ``grad_W[ids] = g`` would keep one).
    """

    def forward(self, ids, weight):
        if ids.dtype.kind not in "iu":
            raise TypeError(f"embedding: ids must be integers, got dtype {ids.dtype}")
        V = weight.shape[0]
        backend.check(((ids < 0) | (ids >= V)).any(), lambda: IndexError(
            f"embedding: ids must lie in [0, {V}) for a table of {V} rows, "
            f"got values from {int(ids.min())} to {int(ids.max())}"))
        # Clipped, so a bad id that is only reported at the end of a training step (see
        # backend.check) reads a real row meanwhile, on every backend (CuPy would wrap it around).
        self.ids, self.weight_shape = backend.xp.clip(ids, 0, V - 1), weight.shape
        return weight[self.ids]                                        # (..., E)

    def backward(self, grad):
        xp, (V, E) = backend.xp, self.weight_shape
        # The scatter-add on the flat positions id·E + column of a 1-D table: NumPy's add.at runs
        # several times faster on one axis than row by row on two.
        flat = (self.ids.reshape(-1, 1) * E + xp.arange(E)).reshape(-1)      # (N·E,)
        grad_w = xp.zeros(V * E, dtype=grad.dtype)
        xp.add.at(grad_w, flat, grad.reshape(-1))
        return None, grad_w.reshape(V, E)                                  # (V, E)
