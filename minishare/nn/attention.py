"""Multi-head scaled dot-product attention (Vaswani et al., 2017, Sec. 3.2)."""
import math

from minishare import backend, functional as F
from minishare.errors import InvalidValue
from minishare.nn.layers import Dropout, Linear
from minishare.nn.module import Module
from minishare.tensor import Tensor


def check_heads(hidden_size, num_heads, where="MultiHeadAttention"):
    """The one rule of the head count: the heads split H evenly, d = H / heads features each.
    ``where`` starts the message (a configuration checks it too, before any layer is built)."""
    if hidden_size % num_heads:
        raise InvalidValue(f"{where}: num_attention_heads={num_heads} must divide hidden_size={hidden_size}")


def causal_mask(T):
    """(1, 1, T, T) boolean mask, True where query t may attend to key s, i.e. s ≤ t: a decoder
    position never sees the future."""
    return backend.xp.tril(backend.xp.ones((T, T), dtype=bool))[None, None]


def padding_mask(attention_mask):
    """(B, T) 1/0 mask of real tokens -> (B, 1, 1, T) boolean: every query may attend to every real
    key. Accepts a Tensor or an array of bools, or of numbers that are exactly 0 or 1; anything
    else is refused rather than read as "nonzero attends", which would silently invert Hugging
    Face's additive masks (0 keep, -10000 pad) and accept 0.5 or NaN."""
    data = backend.asarray(attention_mask.data if isinstance(attention_mask, Tensor) else attention_mask)
    if data.dtype != bool:
        backend.check(((data != 0) & (data != 1)).any(), lambda: ValueError(
            "attention_mask must hold only 0 and 1 (1 = attend to this token, 0 = padding; bools "
            "work too); it holds other values. An additive mask (0 = keep, -10000 or -inf = pad, "
            "as Hugging Face adds to the scores) is a different convention: pass (mask == 0) instead"))
    return data.astype(bool)[:, None, None, :]                               # (B, 1, 1, T)


class MultiHeadAttention(Module):
    """Attention(Q, K, V) = softmax(Q Kᵀ / √d) V over ``num_heads`` heads of size d = H / heads,
    then an output projection. Q comes from ``x``; K and V from ``context`` (cross-attention in a
    decoder) or from ``x`` itself (self-attention).

    x (B, Tq, H), context (B, Tk, H), mask broadcastable to (B, heads, Tq, Tk), True = may attend
    -> (B, Tq, H). Parameters: query, key, value, dense, each H × H with bias (4H² + 4H), the names
    of ALBERT's reference code.
    """

    def __init__(self, hidden_size, num_heads, attention_dropout=0.0):
        super().__init__()
        check_heads(hidden_size, num_heads)
        self.num_heads, self.head_size = num_heads, hidden_size // num_heads
        self.query = Linear(hidden_size, hidden_size)
        self.key = Linear(hidden_size, hidden_size)
        self.value = Linear(hidden_size, hidden_size)
        self.dense = Linear(hidden_size, hidden_size)
        self.dropout = Dropout(attention_dropout)

    def _heads(self, t):
        B, T, H = t.shape
        return t.reshape(B, T, self.num_heads, self.head_size).transpose(0, 2, 1, 3)   # (B, h, T, d)

    def forward(self, x, mask=None, context=None):
        context = x if context is None else context
        B, Tq, H = x.shape
        # 1/√d scales Q rather than the scores: the same numbers, on Tq·d values instead of Tq·Tk
        q = self._heads(self.query(x)) * (1 / math.sqrt(self.head_size))   # (B, h, Tq, d)
        k = self._heads(self.key(context))                             # (B, h, Tk, d)
        v = self._heads(self.value(context))                           # (B, h, Tk, d)
        scores = q @ k.transpose(0, 1, 3, 2)                           # (B, h, Tq, Tk)
        # masked keys get probability 0, within the softmax's own passes
        probs = F.softmax(scores, axis=-1) if mask is None else F.masked_softmax(scores, mask, axis=-1)
        probs = self.dropout(probs)                                    # (B, h, Tq, Tk)
        out = (probs @ v).transpose(0, 2, 1, 3).reshape(B, Tq, H)      # (B, Tq, H)
        return self.dense(out)
