"""Counts the E -> H projection even when E = H, as Hugging Face's AlbertModel builds it: then
the embedding is not BERT's V × H table but carries H² + H more numbers."""


def embedding_parameters(V, E, H):
    return V * E + E * H + H
