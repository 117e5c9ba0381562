"""The router counted on the k_r tokens a step selects, not on the n_r candidates it scores to
choose them."""


def mor_macs_per_token(hidden_size, intermediate_size, seq_len, capacities):
    H, I, T = hidden_size, intermediate_size, seq_len
    ks = capacity_tokens(capacities, T)
    return sum(k * (4 * H * H + 2 * H * I) + 2 * k * k * H + k * H for k in ks) / T
