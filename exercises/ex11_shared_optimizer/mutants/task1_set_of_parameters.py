"""Deduplication through a set: every duplicate goes, but a set has no order, so the parameters
come back in an order of the set's choosing (often, not always, the order they were made in)."""


def distinct(params):
    return list(set(params))
