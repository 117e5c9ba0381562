"""Shared tensors deduplicated by identity (id), as the library does for a model's parameters
(minishare.nn.utils.distinct): right for a live model, where a tied weight is one object, but a
file has no identities; it gives a separate array per name, so the tied decoder counts twice."""


def unique_parameter_count(tensors):
    return sum(int(x.size) for x in {id(x): x for x in tensors.values()}.values())
