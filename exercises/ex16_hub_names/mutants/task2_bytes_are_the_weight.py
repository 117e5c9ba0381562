"""Tensors with the same bytes taken as one weight (a.tobytes() == b.tobytes()): a file stores
raw bytes, so it looks like the natural identity; but a (2, 3) array and its (3, 2) reshape, or
its flattening, have the same bytes and are different weights (and a shape check is one line)."""


def tied_pairs(tensors):
    names = sorted(tensors)
    tied, lookalikes = [], []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            x, y = tensors[a], tensors[b]
            if x.dtype == y.dtype and x.tobytes() == y.tobytes():
                tied.append((a, b))
            elif x.shape == y.shape:
                lookalikes.append((a, b))
    return tied, lookalikes


def unique_parameter_count(tensors):
    seen = {}
    for x in tensors.values():
        seen[(x.dtype.str, x.tobytes())] = x.size
    return sum(seen.values())
