"""A loader that checks the names and the sharing and assigns whatever arrays the file holds:
a file of another width loads, and the model fails later (or silently computes nonsense)."""


def load_shared(model, path):
    with np.load(path, allow_pickle=False) as npz:
        files = {key: npz[key] for key in npz.files}
    names = json.loads(files.pop("__names__").tobytes().decode())
    own = dict(model.named_parameters(remove_duplicate=False))
    if set(names) != set(own):
        raise ValueError(f"{path}: the names differ")
    k_of = {}
    for name, p in own.items():
        if k_of.setdefault(id(p), names[name]) != names[name]:
            raise ValueError(f"{path}: the sharing differs")
    if len(set(k_of.values())) != len(k_of):
        raise ValueError(f"{path}: the sharing differs")
    for name, p in own.items():
        p.data = files[f"tensor/{names[name]}"]
    return model
