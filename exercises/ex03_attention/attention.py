"""Exercise 3: grouped-query attention with masks (Vaswani et al., 2017, Sec. 3.2; Ainslie et
al., 2023, "GQA: Training Generalized Multi-Query Transformer Models from Multi-Head
Checkpoints"; Shazeer, 2019, "Fast Transformer Decoding: One Write-Head is All You Need").

Grouped-query attention shares keys and values across heads: h query heads, but only g key/value
heads (g divides h), each serving h/g consecutive query heads. g = h is ordinary multi-head
attention, g = 1 multi-query attention. The K and V projections shrink from H × H to H × g·d.

Work with minishare Tensors and ``minishare.functional`` (``F.softmax``, ``F.masked_fill``), so
gradients flow. Masks are boolean backend arrays, True where a query may attend to a key.

Chapter 2 prints the library's multi-head attention (one key/value head per query head): the
grouping is yours to work out, and ``minishare.nn.attention`` may not be used.
"""
import math

from minishare import backend, functional as F
from minishare.nn import Linear, Module


def scaled_dot_product_attention(q, k, v, mask=None):
    """Task 1. softmax(q kᵀ / √d) v per query head, query head j using key/value head
    j // (h / g) (heads 0 .. h/g - 1 share key/value head 0, and so on).

    q (..., h, Tq, d), k (..., g, Tk, d), v (..., g, Tk, dv), the same leading axes; ``mask``
    broadcastable to (..., h, Tq, Tk), True = may attend. A masked key gets probability exactly 0;
    a query that may attend nowhere gets all-zero probabilities (and output), never NaN. Raise
    ValueError when g does not divide h. Returns (output (..., h, Tq, dv), probabilities
    (..., h, Tq, Tk))."""
    ### BEGIN SOLUTION task 1
    *lead, h, Tq, d = q.shape
    g, Tk, dv = k.shape[-3], k.shape[-2], v.shape[-1]
    if h % g:
        raise ValueError(f"{g} key/value heads do not divide {h} query heads")
    r = h // g                                                  # query heads per key/value head
    n = len(lead)
    q = q.reshape(*lead, g, r, Tq, d)                           # consecutive heads form a group
    k = k.reshape(*lead, g, 1, Tk, d)                           # broadcast over the group's heads
    scores = (q @ k.transpose(*range(n + 2), n + 3, n + 2)) * (1 / math.sqrt(d))   # (..., g, r, Tq, Tk)
    scores = scores.reshape(*lead, h, Tq, Tk)
    if mask is not None:
        scores = F.masked_fill(scores, ~mask, -math.inf)       # F.softmax gives exactly 0 there
    probs = F.softmax(scores, axis=-1)                          # (..., h, Tq, Tk)
    out = probs.reshape(*lead, g, r, Tq, Tk) @ v.reshape(*lead, g, 1, Tk, dv)   # (..., g, r, Tq, dv)
    return out.reshape(*lead, h, Tq, dv), probs
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


class GroupedQueryAttention(Module):
    """Task 3. ``num_heads`` query heads of size d = H / num_heads and ``num_kv_heads`` key/value
    heads of the same size. x (B, Tq, H), context (B, Tk, H) or None (self-attention), mask
    broadcastable to (B, heads, Tq, Tk) -> (B, Tq, H).
    Parameters (given): query and dense H × H, key and value H × (num_kv_heads · d), with biases.
    Split the projections into heads, attend (task 1), merge the heads, project with ``dense``."""

    def __init__(self, hidden_size, num_heads, num_kv_heads):
        super().__init__()
        if hidden_size % num_heads or num_heads % num_kv_heads:
            raise ValueError(f"need num_heads={num_heads} to divide hidden_size={hidden_size} and "
                             f"num_kv_heads={num_kv_heads} to divide num_heads")
        self.num_heads, self.num_kv_heads = num_heads, num_kv_heads
        kv_size = num_kv_heads * (hidden_size // num_heads)
        self.query, self.dense = Linear(hidden_size, hidden_size), Linear(hidden_size, hidden_size)
        self.key, self.value = Linear(hidden_size, kv_size), Linear(hidden_size, kv_size)

    def forward(self, x, mask=None, context=None):
        ### BEGIN SOLUTION task 3
        context = x if context is None else context
        B, Tq, H = x.shape
        d = H // self.num_heads

        def heads(t, count):                                    # (B, T, count·d) -> (B, count, T, d)
            return t.reshape(B, t.shape[1], count, d).transpose(0, 2, 1, 3)

        out, _ = scaled_dot_product_attention(heads(self.query(x), self.num_heads),
                                              heads(self.key(context), self.num_kv_heads),
                                              heads(self.value(context), self.num_kv_heads), mask)
        return self.dense(out.transpose(0, 2, 1, 3).reshape(B, Tq, H))   # (B, Tq, H)
        ### END SOLUTION
