"""Sequence whose longer blocks come last (M = 3, N = 7: A A B B C C C): the remainder given to
the last sets instead of the first."""


def sequence(N, M):
    if not 1 <= M <= N:
        raise ValueError(f"need 1 <= M <= N, got M={M}, N={N}")
    size, longer = divmod(N, M)
    schedule = []
    for s in range(M):
        schedule += [s] * (size + (s >= M - longer))
    return schedule
