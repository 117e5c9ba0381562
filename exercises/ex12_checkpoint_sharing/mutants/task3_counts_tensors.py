"""Re-tying right, but returning how many names were re-tied (tensors) instead of how many numbers
the model no longer stores: the unit of a parameter count is a scalar."""


def retie(model, alias_map):
    by_name = dict(model.named_parameters(remove_duplicate=False))
    for alias, first in alias_map.items():
        *path, attribute = alias.split(".")
        owner = model
        for part in path:
            owner = owner._modules[part]
        setattr(owner, attribute, by_name[first])
    return len(alias_map)
