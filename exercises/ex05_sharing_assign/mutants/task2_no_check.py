"""Cycle that accepts M > N (and M = 0 crashes with ZeroDivisionError): it never checks 1 ≤ M ≤ N."""


def cycle(N, M):
    return [i % M for i in range(N)]
