"""Cycle (rev) that applies the code's rule (Cycle for N − M positions, then reversed) to both
rules: the worked examples where M divides N pass, the paper's rule for M ∤ N does not."""


def cycle_rev(N, M, rule="paper"):
    if not 1 <= M <= N:
        raise ValueError(f"need 1 <= M <= N, got M={M}, N={N}")
    if rule not in ("paper", "code"):
        raise ValueError(f"rule must be 'paper' or 'code', got {rule!r}")
    cycled = N - M if N > M else N
    return [i % M if i < cycled else M - 1 - (i - cycled) % M for i in range(N)]
