"""Counts each position's W and b, as if every position that uses a set stored its own copy:
that is what is computed with, not what is stored."""


def relaxed_count(linears, schedule, rank):
    per_layer = sum(i * o + (o if bias else 0) + rank * (i + o) for i, o, bias in linears)
    return len(schedule) * per_layer
