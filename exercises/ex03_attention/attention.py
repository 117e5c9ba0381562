"""Exercise 3: multi-head attention with masks (Vaswani et al., 2017, Sec. 3.2).

Work with minishare Tensors and ``minishare.functional`` (``F.softmax``, ``F.masked_fill``), so
gradients flow. Masks are boolean backend arrays, True where a query may attend to a key.

The library's ``minishare/nn/attention.py`` holds an answer: please do not look at it until you
are done.
"""
import math

from minishare import backend, functional as F
from minishare.nn import Linear, Module


def scaled_dot_product_attention(q, k, v, mask=None):
    """Task 1. softmax(q kᵀ / √d) v over the last two axes. q (..., Tq, d), k (..., Tk, d),
    v (..., Tk, dv); ``mask`` broadcastable to (..., Tq, Tk), True = may attend. A masked key gets
    probability exactly 0; a query that may attend nowhere gets all-zero probabilities (and
    output), never NaN. Returns (output (..., Tq, dv), probabilities (..., Tq, Tk))."""
    ### BEGIN SOLUTION task 1
    scores = (q @ k.transpose(*range(k.ndim - 2), k.ndim - 1, k.ndim - 2)) * (1 / math.sqrt(q.shape[-1]))
    if mask is not None:
        scores = F.masked_fill(scores, ~mask, -math.inf)       # F.softmax gives exactly 0 there
    probs = F.softmax(scores, axis=-1)                          # (..., Tq, Tk)
    return probs @ v, probs
    ### END SOLUTION


def causal_and_padding_mask(attention_mask):
    """Task 2. The mask of a decoder's self-attention over a padded batch: query t may attend to
    key s when s ≤ t and s is a real token. ``attention_mask`` (B, T) of 1 (real) / 0 (padding),
    a backend array -> boolean (B, 1, T, T), broadcast over heads."""
    ### BEGIN SOLUTION task 2
    xp = backend.xp
    real = backend.asarray(attention_mask).astype(bool)        # (B, T)
    T = real.shape[1]
    causal = xp.tril(xp.ones((T, T), dtype=bool))              # (T, T), s ≤ t
    return causal[None, None] & real[:, None, None, :]         # (B, 1, T, T)
    ### END SOLUTION


class MultiHeadAttention(Module):
    """Task 3. ``num_heads`` heads of size d = H / num_heads. x (B, Tq, H), context (B, Tk, H) or
    None (self-attention), mask broadcastable to (B, heads, Tq, Tk) -> (B, Tq, H).
    Parameters (given): query, key, value, dense, each H × H with bias."""

    def __init__(self, hidden_size, num_heads):
        super().__init__()
        if hidden_size % num_heads:
            raise ValueError(f"num_heads={num_heads} must divide hidden_size={hidden_size}")
        self.num_heads = num_heads
        self.query, self.key = Linear(hidden_size, hidden_size), Linear(hidden_size, hidden_size)
        self.value, self.dense = Linear(hidden_size, hidden_size), Linear(hidden_size, hidden_size)

    def forward(self, x, mask=None, context=None):
        ### BEGIN SOLUTION task 3
        context = x if context is None else context
        B, Tq, H = x.shape
        h = self.num_heads

        def heads(t):                                           # (B, T, H) -> (B, h, T, H/h)
            return t.reshape(B, t.shape[1], h, H // h).transpose(0, 2, 1, 3)

        out, _ = scaled_dot_product_attention(heads(self.query(x)), heads(self.key(context)),
                                              heads(self.value(context)), mask)
        return self.dense(out.transpose(0, 2, 1, 3).reshape(B, Tq, H))
        ### END SOLUTION
