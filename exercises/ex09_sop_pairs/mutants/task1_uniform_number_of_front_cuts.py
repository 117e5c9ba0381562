"""Truncation that draws how many tokens to drop from the front uniformly (0 to the excess) and
cuts the rest from the back: both ends get cut, so it looks random, but it is not one fair coin
per token, and the kept window sits near an end far more often than it should."""


def truncate_segment(tokens, limit, rng):
    tokens = list(tokens)
    excess = max(len(tokens) - limit, 0)
    front = int(rng.integers(0, excess + 1))
    return tokens[front:len(tokens) - (excess - front)]
