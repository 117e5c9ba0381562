"""Halting when the sum reaches 1 rather than 1 − ε: ε looks like a detail, but without it a
position whose probabilities sum to 0.995 never halts before the last step."""


def act_halting(halting_probabilities, epsilon=0.01):
    total = 0.0
    for n, h in enumerate(halting_probabilities, start=1):
        if total + h >= 1 or n == len(halting_probabilities):
            remainder = 1.0 - total
            return n, remainder, [*halting_probabilities[:n - 1], remainder]
        total += h
    raise ValueError("act_halting needs at least one halting probability")
