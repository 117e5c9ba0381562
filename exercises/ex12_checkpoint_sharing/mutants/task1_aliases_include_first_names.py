"""Aliases that list every name of a shared tensor, its first name included (mapped to itself):
"the names of a shared tensor" rather than "the names other than the first"."""


def aliases(model):
    names = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        names.setdefault(id(p), []).append(name)
    return {name: group[0] for group in names.values() if len(group) > 1 for name in group}
