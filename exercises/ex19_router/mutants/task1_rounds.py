"""k_r rounded to the nearest integer instead of floored: ⌊c_r T⌋ is the capacity, and rounding
hands a step more tokens than its budget whenever c_r T has a fraction of one half or more."""


def capacity_tokens(capacities, seq_len):
    if not len(capacities) or any(not 0 < c <= 1 for c in capacities):
        raise ValueError("capacities must be a non-empty list of numbers in (0, 1]")
    if any(b > a for a, b in zip(capacities, capacities[1:])):
        raise ValueError("capacities must not grow")
    return [max(1, round(c * seq_len)) for c in capacities]
