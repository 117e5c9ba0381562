"""Group ⌊i · G / N⌋ computed in exact integer arithmetic (i * G // N): the same formula on paper
as transformers' int(i / (N / G)), but transformers computes it in floats, where N / G is rounded
and, e.g. for N = 18, G = 14, position 9 runs group 6, not 7. The checkpoint means what the code
that trained it computed."""
_reference_plan = plan_from_names


def plan_from_names(names, num_hidden_layers, inner_group_num=None):
    plan = _reference_plan(names, num_hidden_layers, inner_group_num)    # the same reading, refusals
    N = num_hidden_layers
    K = len(plan) // N
    G = max(plan) // K + 1
    return [(i * G // N) * K + k for i in range(N) for k in range(K)]
