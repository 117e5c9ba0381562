"""One entry per position, the group it runs: right when K = 1 (every released ALBERT), but a
group of K inner layers runs K distinct sets at K positions (Cycle A B A B is one group of two
layers), so the plan has N · K positions and set g · K + k."""
_reference_plan = plan_from_names


def plan_from_names(names, num_hidden_layers, inner_group_num=None):
    plan = _reference_plan(names, num_hidden_layers, inner_group_num)    # the same reading, refusals
    N = num_hidden_layers
    K = len(plan) // N
    G = max(plan) // K + 1
    return [int(i / (N / G)) for i in range(N)]
