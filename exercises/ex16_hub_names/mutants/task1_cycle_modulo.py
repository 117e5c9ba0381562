"""Groups taken in turn, position i running group i mod G (Cycle, A B A B): the names say "G
groups" and nothing about their order, and Takase & Kiyono's Cycle is a familiar reading. But
transformers runs the groups in consecutive blocks, int(i / (N / G)): A A B B."""
_reference_plan = plan_from_names


def plan_from_names(names, num_hidden_layers, inner_group_num=None):
    plan = _reference_plan(names, num_hidden_layers, inner_group_num)    # the same reading, refusals
    N = num_hidden_layers
    K = len(plan) // N
    G = max(plan) // K + 1
    return [(i % G) * K + k for i in range(N) for k in range(K)]
