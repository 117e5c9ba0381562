"""Re-tying with ``setattr(model, "layers.2.weight", p)``: Python accepts the dotted string as an
attribute name of the model itself, so nothing at the alias's path changes."""


def retie(model, alias_map):
    before = sum(p.size for p in model.parameters())
    by_name = dict(model.named_parameters(remove_duplicate=False))
    for alias, first in alias_map.items():
        object.__setattr__(model, alias, by_name[first])
    return before - sum(p.size for p in model.parameters())
