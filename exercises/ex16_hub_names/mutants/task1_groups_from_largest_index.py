"""G and K read as 1 + the largest group and inner-layer index, with nothing checked: a file
missing a group, a group missing a layer, or a layer missing a tensor gives a plan anyway (one
that names sets the file does not hold), and so does G > N."""


def plan_from_names(names, num_hidden_layers, inner_group_num=None):
    found = [ALBERT_LAYER.fullmatch(name) for name in names]
    found = [m for m in found if m]
    if not found:
        raise ValueError("not an ALBERT checkpoint")
    G = 1 + max(int(m[1]) for m in found)
    K = 1 + max(int(m[2]) for m in found)
    N = num_hidden_layers
    return [int(i / (N / G)) * K + k for i in range(N) for k in range(K)]
