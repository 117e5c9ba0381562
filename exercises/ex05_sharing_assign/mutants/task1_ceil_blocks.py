"""Sequence with blocks of ⌈N/M⌉ positions: right when M divides N, but for M = 3, N = 7 the
blocks are 3, 3, 1 (A A A B B B C) instead of 3, 2, 2."""


def sequence(N, M):
    if not 1 <= M <= N:
        raise ValueError(f"need 1 <= M <= N, got M={M}, N={N}")
    size = -(-N // M)
    return [min(i // size, M - 1) for i in range(N)]
