"""Re-tying by copying the first name's values into each alias (``alias.data = first.data``): the
numbers agree today, but the tensors stay distinct, so nothing is saved and the next step unties
them again."""


def retie(model, alias_map):
    before = sum(p.size for p in model.parameters())
    by_name = dict(model.named_parameters(remove_duplicate=False))
    for alias, first in alias_map.items():
        by_name[alias].data = by_name[first].data
    return before - sum(p.size for p in model.parameters())
