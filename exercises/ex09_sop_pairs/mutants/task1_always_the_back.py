"""Truncation that always drops tokens from the back: the simplest way to "fit the budget", and a
cue leak in waiting, since where a segment was cut then depends on nothing random at all."""


def truncate_segment(tokens, limit, rng):
    return list(tokens)[:limit]
