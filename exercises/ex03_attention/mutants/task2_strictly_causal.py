"""The strict lower triangle (s < t, tril with k=-1): a token may not attend to itself, and the
first token may attend nowhere."""


def causal_and_padding_mask(attention_mask):
    xp = backend.xp
    real = backend.asarray(attention_mask).astype(bool)
    T = real.shape[1]
    return xp.tril(xp.ones((T, T), dtype=bool), k=-1)[None, None] & real[:, None, None, :]
