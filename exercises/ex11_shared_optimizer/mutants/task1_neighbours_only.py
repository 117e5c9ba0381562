"""Deduplication of repeats that follow each other only (like ``uniq``): a list built layer by
layer (w, b, w, b, ...) keeps every repeat."""


def distinct(params):
    kept = []
    for p in params:
        if not kept or kept[-1] is not p:
            kept.append(p)
    return kept
