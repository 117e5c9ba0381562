"""Equal values and shapes (np.array_equal alone) taken as one weight: np.array_equal compares
values, so a float64 copy of a float32 table counts as the same stored tensor, though the file
holds two tensors of different sizes and a loader gives two weights."""


def tied_pairs(tensors):
    names = sorted(tensors)
    tied, lookalikes = [], []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            x, y = tensors[a], tensors[b]
            if x.shape != y.shape:
                continue
            (tied if np.array_equal(x, y) else lookalikes).append((a, b))
    return tied, lookalikes


def unique_parameter_count(tensors):
    kept = []
    for name in sorted(tensors):
        x = tensors[name]
        if not any(x.shape == y.shape and np.array_equal(x, y) for y in kept):
            kept.append(x)
    return sum(int(x.size) for x in kept)
