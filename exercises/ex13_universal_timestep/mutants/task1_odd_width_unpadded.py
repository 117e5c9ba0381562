"""The signal built by concatenating the sine and cosine halves, which is right for an even H but
for an odd H returns H − 1 channels: Tensor2Tensor pads a last channel of zeros."""


def timestep_signal(t, T, H):
    K = H // 2
    freq = 10000.0 ** (-np.arange(K) / max(K - 1, 1))
    angles = np.arange(T)[:, None] * freq
    return np.concatenate([np.sin(angles) + np.sin(t * freq), np.cos(angles) + np.cos(t * freq)], axis=1)
