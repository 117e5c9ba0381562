"""Scores scaled by 1/√dv, the size of the values, instead of 1/√d, the size of the queries and
keys: the same whenever dv = d, as in every layer of a standard Transformer."""


def scaled_dot_product_attention(q, k, v, mask=None):
    *lead, h, Tq, d = q.shape
    g, Tk, dv = k.shape[-3], k.shape[-2], v.shape[-1]
    if h % g:
        raise ValueError(f"{g} key/value heads do not divide {h} query heads")
    r, n = h // g, len(lead)
    q = q.reshape(*lead, g, r, Tq, d)
    k = k.reshape(*lead, g, 1, Tk, d)
    scores = (q @ k.transpose(*range(n + 2), n + 3, n + 2)) * (1 / math.sqrt(dv))
    scores = scores.reshape(*lead, h, Tq, Tk)
    if mask is not None:
        scores = F.masked_fill(scores, ~mask, -math.inf)
    probs = F.softmax(scores, axis=-1)
    out = probs.reshape(*lead, g, r, Tq, Tk) @ v.reshape(*lead, g, 1, Tk, dv)
    return out.reshape(*lead, h, Tq, dv), probs
