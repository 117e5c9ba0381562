"""An ALBERT layer named by its group alone (enc.{g}): right for every released ALBERT (K = 1),
but with K inner layers per group, layer k of group g is its own set g · K + k, and naming it g
makes the K layers of a group collide."""
_reference_names = to_minishare


def to_minishare(names):
    flat = _reference_names(names)
    for name in flat:
        m = ALBERT_LAYER.fullmatch(name)
        if m:
            flat[name] = f"enc.{int(m[1])}." + flat[name].split(".", 2)[2]
    return flat
