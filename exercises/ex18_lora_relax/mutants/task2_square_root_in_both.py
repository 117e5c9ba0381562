"""Splits the singular values between the factors, B = U_r √Σ_r and A = √Σ_r V_rᵀ: the same
product, but not the paper's convention (B = U_r Σ_r, A = V_rᵀ), under which A's rows stay
orthonormal and its scale is that of a fresh LoRA A."""


def svd_init(original, shared, rank):
    residual = np.asarray(original, dtype=np.float64) - np.asarray(shared, dtype=np.float64)
    if not 0 <= rank <= min(residual.shape):
        raise ValueError(f"rank {rank} out of range")
    U, S, Vt = np.linalg.svd(residual, full_matrices=False)
    root = np.sqrt(S[:rank])
    return U[:, :rank] * root, root[:, None] * Vt[:rank]
