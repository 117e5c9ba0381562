"""A file with one tensor per name, as a plain state dict has: the map is right in form, but a
tensor shared by L positions is stored L times, and the file no longer says what is shared."""


def save_shared(model, path):
    arrays, names = {}, {}
    for k, (name, p) in enumerate(model.named_parameters(remove_duplicate=False)):
        arrays[f"tensor/{k}"] = p.numpy()
        names[name] = k
    arrays["__names__"] = np.frombuffer(json.dumps(names).encode(), dtype=np.uint8)
    with atomic_write(path, "wb") as f:
        np.savez(f, **arrays)
