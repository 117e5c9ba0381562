"""Truncation that deletes from the caller's list instead of a copy: the segment comes out right,
but the document it was taken from is cut too."""


def truncate_segment(tokens, limit, rng):
    while len(tokens) > limit:
        del tokens[0 if rng.random() < 0.5 else -1]
    return tokens
