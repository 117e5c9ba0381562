"""Forgets the projection's bias: counts V·E + E·H, as the chapter's formula (written "up to
biases") reads at a glance."""


def embedding_parameters(V, E, H):
    return V * H if E == H else V * E + E * H
