"""A loader that gives every name a new Parameter built from the file: values and outputs are
right, but each position now holds its own copy, and the first training step unties them."""
from minishare.nn import Parameter


def load_shared(model, path):
    with np.load(path, allow_pickle=False) as npz:
        files = {key: npz[key] for key in npz.files}
    names = json.loads(files.pop("__names__").tobytes().decode())
    own = dict(model.named_parameters(remove_duplicate=False))
    if set(names) != set(own):
        raise ValueError(f"{path}: the names differ")
    for name, p in own.items():
        if files[f"tensor/{names[name]}"].shape != p.shape:
            raise ValueError(f"{path}: {name} has another shape")
    for name, p in own.items():
        *path_, attribute = name.split(".")
        owner = model
        for part in path_:
            owner = owner._modules[part]
        setattr(owner, attribute, Parameter(files[f"tensor/{names[name]}"].astype(p.dtype)))
    return model
