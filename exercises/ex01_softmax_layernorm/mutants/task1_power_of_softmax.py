"""softmax(x) first, then its power 1/τ, renormalised: the same function on paper, since
softmax(x)^(1/τ) ∝ exp(x/τ), but exp(x) underflows before the temperature can soften it:
x = (0, -800) at τ = 100 gives (1, 0) instead of (0.99966, 3.4e-4)."""


def softmax_with_temperature(x, tau, axis=-1):
    xp = backend.xp
    e = xp.exp(x - x.max(axis=axis, keepdims=True))
    p = (e / e.sum(axis=axis, keepdims=True)) ** (1 / tau)
    return p / p.sum(axis=axis, keepdims=True)
