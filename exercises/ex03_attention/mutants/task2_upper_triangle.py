"""The upper triangle (triu) for the causal part: query t sees the keys s ≥ t, the future
instead of the past (rows and columns swapped)."""


def causal_and_padding_mask(attention_mask):
    xp = backend.xp
    real = backend.asarray(attention_mask).astype(bool)
    T = real.shape[1]
    return xp.triu(xp.ones((T, T), dtype=bool))[None, None] & real[:, None, None, :]
