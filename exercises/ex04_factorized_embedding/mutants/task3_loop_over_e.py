"""Tries E = H − 1, H − 2, ... until one saves parameters: right, but the docstring asks to
solve the inequality, and with H = 10^12 the loop runs 10^9 times."""


def break_even_embedding_size(V, H):
    E = H - 1
    while V * E + E * H + H >= V * H:
        E -= 1
    return E
