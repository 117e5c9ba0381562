"""No floor of one token: a small capacity on a short sequence gives a step with no token at all."""


def capacity_tokens(capacities, seq_len):
    if not len(capacities) or any(not 0 < c <= 1 for c in capacities):
        raise ValueError("capacities must be a non-empty list of numbers in (0, 1]")
    if any(b > a for a, b in zip(capacities, capacities[1:])):
        raise ValueError("capacities must not grow")
    return [int(c * seq_len + 1e-9) for c in capacities]
