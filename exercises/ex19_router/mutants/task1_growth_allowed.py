"""Growing capacities accepted: a step would have to choose more tokens than the step before left
it as candidates."""


def capacity_tokens(capacities, seq_len):
    if not len(capacities) or any(not 0 < c <= 1 for c in capacities):
        raise ValueError("capacities must be a non-empty list of numbers in (0, 1]")
    return [max(1, int(c * seq_len + 1e-9)) for c in capacities]
