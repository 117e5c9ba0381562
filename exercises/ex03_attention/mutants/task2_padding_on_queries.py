"""Padding applied to the queries (rows) instead of the keys (columns): a real token may then
attend to padding that comes before it, and the padded rows are what gets hidden."""


def causal_and_padding_mask(attention_mask):
    xp = backend.xp
    real = backend.asarray(attention_mask).astype(bool)
    T = real.shape[1]
    return xp.tril(xp.ones((T, T), dtype=bool))[None, None] & real[:, None, :, None]
