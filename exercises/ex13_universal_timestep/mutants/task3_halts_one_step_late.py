"""Halting tested on the sum before adding the step's own probability, so a position halts one
step after its sum reached 1 − ε, and the remainder 1 − (h_1 + ... + h_{N−1}) can be negative."""


def act_halting(halting_probabilities, epsilon=0.01):
    total = 0.0
    for n, h in enumerate(halting_probabilities, start=1):
        if total >= 1 - epsilon or n == len(halting_probabilities):
            remainder = 1.0 - total
            return n, remainder, [*halting_probabilities[:n - 1], remainder]
        total += h
    raise ValueError("act_halting needs at least one halting probability")
