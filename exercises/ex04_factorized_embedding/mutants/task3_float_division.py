"""Solves the inequality with float division, (V H - H) / (V + H), one less when it divides: right
while E has at most 16 digits, off by thousands for V and H near 10^20 (the docstring allows any
size), where only integer arithmetic is exact."""


def break_even_embedding_size(V, H):
    bound = (V * H - H) / (V + H)
    return int(bound) - 1 if bound == int(bound) else int(bound)
