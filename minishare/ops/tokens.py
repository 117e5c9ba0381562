"""Taking some tokens of each sequence out, and adding results back at their places: the two moves
of a router that sends only some tokens through a block (Mixture-of-Recursions, ``nn.mor``).

Each sequence b of a batch has its own k positions ``index[b]`` (distinct, as top-k gives them).
The two ops are each other's transpose, so each one's backward is the other's forward:

    GatherTokens      y[b, j]          = x[b, index[b, j]]           (B, T, H) -> (B, k, H)
                      ∂L/∂x[b, t]      = Σ_{j: index[b, j] = t} ∂L/∂y[b, j]    (a scatter-add)
    ScatterAddTokens  y                = x,  y[b, index[b, j]] += s[b, j]
                      ∂L/∂x = ∂L/∂y,   ∂L/∂s[b, j] = ∂L/∂y[b, index[b, j]]    (a gather)

PyTorch spells them ``torch.gather(x, 1, index[..., None].expand(-1, -1, H))`` and
``torch.scatter_add(x, 1, ..., s)``. The backward of the gather adds (``add.at``) rather than
assigns, so it stays right even if a position were picked twice.
"""
from minishare import backend
from minishare.errors import InvalidValue
from minishare.tensor import Function


def check_token_index(x_shape, index):
    """The one rule of a token index: integers of shape (B, k) for x of shape (B, T, ...), each in
    [0, T)."""
    if getattr(index, "ndim", None) != 2 or index.dtype.kind not in "iu" or index.shape[0] != x_shape[0]:
        raise InvalidValue(f"a token index must be integer positions of shape (B, k) with B = {x_shape[0]}, "
                           f"got {getattr(index, 'dtype', type(index).__name__)} of shape "
                           f"{getattr(index, 'shape', None)}")
    if index.size and (int(index.min()) < 0 or int(index.max()) >= x_shape[1]):
        raise InvalidValue(f"token positions must lie in [0, T = {x_shape[1]})")


def _rows(index):
    """The batch coordinate that pairs with ``index`` (B, k): b at every place of row b."""
    return backend.xp.arange(index.shape[0])[:, None]                         # (B, 1)


class GatherTokens(Function):
    """y = x[b, index[b]] for every sequence b: (B, T, ...) and (B, k) -> (B, k, ...).
    Backward: the gradient added back at the picked positions, zero elsewhere."""

    def forward(self, x, index):
        check_token_index(x.shape, index)
        self.shape, self.dtype, self.index = x.shape, x.dtype, index
        return x[_rows(index), index]                                      # (B, k, ...)

    def backward(self, grad):
        full = backend.xp.zeros(self.shape, dtype=self.dtype)               # (B, T, ...)
        backend.xp.add.at(full, (_rows(self.index), self.index), grad)
        return full, None


class ScatterAddTokens(Function):
    """y = x with s[b, j] added at position index[b, j] of sequence b: (B, T, ...), (B, k) and
    (B, k, ...) -> (B, T, ...). Backward: x's gradient passes unchanged; s's is the output's
    gradient gathered at the same positions."""

    def forward(self, x, index, src):
        check_token_index(x.shape, index)
        if src.shape != index.shape + x.shape[2:]:
            raise InvalidValue(f"scatter_add_tokens: the values added must have shape "
                               f"{index.shape + x.shape[2:]} (one row per index), got {src.shape}")
        self.index = index
        out = x.copy()
        backend.xp.add.at(out, (_rows(index), index), src)
        return out

    def backward(self, grad):
        return grad, None, grad[_rows(self.index), self.index]
