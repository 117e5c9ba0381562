"""Keeps the last r singular triplets instead of the first: NumPy returns the singular values in
decreasing order, so these are the r directions that matter least."""


def svd_init(original, shared, rank):
    residual = np.asarray(original, dtype=np.float64) - np.asarray(shared, dtype=np.float64)
    if not 0 <= rank <= min(residual.shape):
        raise ValueError(f"rank {rank} out of range")
    U, S, Vt = np.linalg.svd(residual, full_matrices=False)
    keep = slice(len(S) - rank, len(S))
    return U[:, keep] * S[keep], Vt[keep]
