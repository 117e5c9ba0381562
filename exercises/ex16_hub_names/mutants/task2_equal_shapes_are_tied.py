"""Tensors of the same shape taken as one weight: the tied decoder does have the word table's
shape, but so do the query, key, value and output weights of every layer (H × H), which are four
weights. Shape is a necessary condition, not evidence."""


def tied_pairs(tensors):
    names = sorted(tensors)
    tied = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]
            if tensors[a].shape == tensors[b].shape and tensors[a].dtype == tensors[b].dtype]
    return tied, []


def unique_parameter_count(tensors):
    seen = {(x.shape, x.dtype.str): x.size for x in tensors.values()}
    return sum(seen.values())
