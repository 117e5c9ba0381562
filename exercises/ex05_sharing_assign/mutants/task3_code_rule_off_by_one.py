"""Cycle (rev) by the code's rule that reverses the last M − 1 positions instead of the last M
(an off-by-one in where the reversed part starts): wrong whenever N > M."""


def cycle_rev(N, M, rule="paper"):
    if not 1 <= M <= N:
        raise ValueError(f"need 1 <= M <= N, got M={M}, N={N}")
    if rule == "paper":
        cycled = max(M, M * (-(-N // M) - 1))
    elif rule == "code":
        cycled = N - M + 1 if N > M else N
    else:
        raise ValueError(f"rule must be 'paper' or 'code', got {rule!r}")
    return [i % M if i < cycled else M - 1 - (i - cycled) % M for i in range(N)]
