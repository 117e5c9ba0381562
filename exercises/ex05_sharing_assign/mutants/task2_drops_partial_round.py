"""Cycle as whole rounds only, ``list(range(M)) * (N // M)``: right when M divides N, but it
drops the last partial round, so N = 7, M = 3 gets 6 positions."""


def cycle(N, M):
    if not 1 <= M <= N:
        raise ValueError(f"need 1 <= M <= N, got M={M}, N={N}")
    return list(range(M)) * (N // M)
