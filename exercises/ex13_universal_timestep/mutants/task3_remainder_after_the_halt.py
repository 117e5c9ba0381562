"""The remainder taken after the halting step's probability is added, R = 1 − (h_1 + ... + h_N):
"what is left" sounds like everything spent, but then R is negative whenever the sum overshoots
1 and the weights no longer sum to 1."""


def act_halting(halting_probabilities, epsilon=0.01):
    total = 0.0
    for n, h in enumerate(halting_probabilities, start=1):
        total += h
        if total >= 1 - epsilon or n == len(halting_probabilities):
            remainder = 1.0 - total
            return n, remainder, [*halting_probabilities[:n - 1], remainder]
    raise ValueError("act_halting needs at least one halting probability")
