"""The signal with its halves swapped, cosines first and sines second: both layouts are "half sin,
half cos", and at the origin (where both halves hold 0s and 2s) it is easy not to notice which
comes first."""


def timestep_signal(t, T, H):
    K = H // 2
    freq = 10000.0 ** (-np.arange(K) / max(K - 1, 1))
    angles = np.arange(T)[:, None] * freq
    signal = np.zeros((T, H))
    signal[:, :K] = np.cos(angles) + np.cos(t * freq)
    signal[:, K:2 * K] = np.sin(angles) + np.sin(t * freq)
    return signal
