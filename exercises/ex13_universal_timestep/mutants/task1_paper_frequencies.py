"""Tensor2Tensor's layout with the paper's frequencies 10000^(−2j/H) (Vaswani et al.'s exponent,
the one the book prints) instead of the code's 10000^(−j/(K−1)): the same first frequency, so
channel 0 and channel K agree and the others drift apart."""


def timestep_signal(t, T, H):
    K = H // 2
    freq = 1.0 / 10000.0 ** (2 * np.arange(K) / H)
    angles = np.arange(T)[:, None] * freq
    signal = np.zeros((T, H))
    signal[:, :K] = np.sin(angles) + np.sin(t * freq)
    signal[:, K:2 * K] = np.cos(angles) + np.cos(t * freq)
    return signal
