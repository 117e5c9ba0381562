"""Query head j reads key/value head j mod g (the key/value heads tiled, as np.tile would)
instead of j // (h/g) (each repeated, as repeat_interleave): the same when g = 1 or g = h, a
different model for anything in between."""


def scaled_dot_product_attention(q, k, v, mask=None):
    *lead, h, Tq, d = q.shape
    g, Tk, dv = k.shape[-3], k.shape[-2], v.shape[-1]
    if h % g:
        raise ValueError(f"{g} key/value heads do not divide {h} query heads")
    r, n = h // g, len(lead)
    q = q.reshape(*lead, r, g, Tq, d)                           # head j = (j // g, j % g)
    k = k.reshape(*lead, 1, g, Tk, d)
    scores = (q @ k.transpose(*range(n + 2), n + 3, n + 2)) * (1 / math.sqrt(d))
    scores = scores.reshape(*lead, h, Tq, Tk)
    if mask is not None:
        scores = F.masked_fill(scores, ~mask, -math.inf)
    probs = F.softmax(scores, axis=-1)
    out = probs.reshape(*lead, r, g, Tq, Tk) @ v.reshape(*lead, 1, g, Tk, dv)
    return out.reshape(*lead, h, Tq, dv), probs
