"""Searches the ranks below min(in, out), one short: full rank is a rank too, and with biases it
can still pay (a 1 -> 100 Linear with a bias, one set for 4 positions: rank 1 stores 604 numbers
against 800, so the break-even rank is 1, not 0)."""


def break_even_rank(linears, schedule):
    not_shared = len(schedule) * sum(i * o + (o if bias else 0) for i, o, bias in linears)
    largest = min(min(i, o) for i, o, _ in linears)
    fewer = [r for r in range(largest) if relaxed_count(linears, schedule, r) < not_shared]
    return max(fewer) if fewer else -1
