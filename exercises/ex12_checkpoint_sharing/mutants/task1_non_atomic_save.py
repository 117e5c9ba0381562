"""A save straight to the target (``numpy.savez(path, ...)``): the right file when all goes well,
but the old file is truncated the moment the new one is opened, so a save that fails halfway (or
a crash) leaves half a checkpoint and no old one."""


def save_shared(model, path):
    index, arrays, names = {}, {}, {}
    for name, p in model.named_parameters(remove_duplicate=False):
        if id(p) not in index:
            index[id(p)] = len(index)
            arrays[f"tensor/{index[id(p)]}"] = p.numpy()
        names[name] = index[id(p)]
    arrays["__names__"] = np.frombuffer(json.dumps(names).encode(), dtype=np.uint8)
    np.savez(path, **arrays)
