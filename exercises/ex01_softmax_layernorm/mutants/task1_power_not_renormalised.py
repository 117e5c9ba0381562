"""The temperature applied as a power of the softmax, softmax(x)^(1/τ), and not renormalised: the
rows no longer sum to 1 (softmax(2 log(1, 2, 3)) at τ = 2 is (1, 2, 3)/√14, not (1, 2, 3)/6)."""


def softmax_with_temperature(x, tau, axis=-1):
    xp = backend.xp
    e = xp.exp(x - x.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)) ** (1 / tau)
