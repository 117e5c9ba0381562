"""Gives each shared set one A and B, not each position: the positions of a set would then
compute the same layer again, and the relaxation would relax nothing."""


def relaxed_count(linears, schedule, rank):
    per_set = sum(i * o + (o if bias else 0) + rank * (i + o) for i, o, bias in linears)
    return len(set(schedule)) * per_set
