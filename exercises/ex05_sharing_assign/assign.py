"""Exercise 5: which of M parameter sets serves each of N layer positions (Takase & Kiyono, 2021,
"Lessons on Parameter Sharing across Layers in Transformers", Sec. 2).

Positions and sets are 0-based: position 0 is the first layer the input goes through, set 0 is
"A". Each function returns a list of N set indices.

The library's ``minishare.sharing.assign`` implements the paper's rules where M divides N (and
refuses Sequence otherwise): please do not look at it until you are done. Task 1 goes further.
"""


def sequence(N, M):
    """Task 1. Sequence for any 1 ≤ M ≤ N: consecutive blocks, one per set, in order (A A B B C C
    for M = 3, N = 6). When M does not divide N, blocks differ in size by at most one and the
    longer blocks come first (M = 3, N = 7: A A A B B C C)."""
    ### BEGIN SOLUTION task 1
    if not 1 <= M <= N:
        raise ValueError(f"need 1 <= M <= N, got M={M}, N={N}")
    size, longer = divmod(N, M)
    schedule = []
    for s in range(M):
        schedule += [s] * (size + (s < longer))
    return schedule
    ### END SOLUTION


def cycle(N, M):
    """Task 2. Cycle: the M sets in order, repeated (A B C A B C for M = 3, N = 6); a last partial
    round uses the first N mod M sets."""
    ### BEGIN SOLUTION task 2
    if not 1 <= M <= N:
        raise ValueError(f"need 1 <= M <= N, got M={M}, N={N}")
    return [i % M for i in range(N)]
    ### END SOLUTION


def cycle_rev(N, M, rule="paper"):
    """Task 3. Cycle (rev), by either rule (Takase & Kiyono, Sec. 2, and their code):

    - ``"paper"`` (the text): Cycle for the first M·(⌈N/M⌉ − 1) positions, the sets in reverse
      order (M−1, M−2, ...) for the remaining ones; M = 3, N = 7: A B C A B C C. With M = N every
      position has its own set, in order.
    - ``"code"`` (the authors' released code): Cycle for the first N − M positions, then the M
      sets in reverse order; M = 3, N = 7: A B C A C B A; M = 3, N = 4: A C B A. With M = N every
      position has its own set, in order.

    The two agree whenever M divides N (M = 3, N = 6: A B C C B A)."""
    ### BEGIN SOLUTION task 3
    if not 1 <= M <= N:
        raise ValueError(f"need 1 <= M <= N, got M={M}, N={N}")
    if rule == "paper":
        cycled = max(M, M * (-(-N // M) - 1))
    elif rule == "code":
        cycled = N - M if N > M else N
    else:
        raise ValueError(f"rule must be 'paper' or 'code', got {rule!r}")
    return [i % M if i < cycled else M - 1 - (i - cycled) % M for i in range(N)]
    ### END SOLUTION
