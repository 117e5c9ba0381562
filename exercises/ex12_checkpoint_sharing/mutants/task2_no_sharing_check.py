"""A loader that checks names and shapes but not the sharing: a model whose blocks are shared
differently, with the same names and shapes, loads without complaint and runs a model the file
never described."""


def load_shared(model, path):
    with np.load(path, allow_pickle=False) as npz:
        files = {key: npz[key] for key in npz.files}
    names = json.loads(files.pop("__names__").tobytes().decode())
    own = dict(model.named_parameters(remove_duplicate=False))
    if set(names) != set(own):
        raise ValueError(f"{path}: names missing {sorted(set(own) - set(names))}, "
                         f"unexpected {sorted(set(names) - set(own))}")
    for name, p in own.items():
        if files[f"tensor/{names[name]}"].shape != p.shape:
            raise ValueError(f"{path}: {name} has another shape")
    for name, p in own.items():
        p.data = files[f"tensor/{names[name]}"].astype(p.dtype)
    return model
