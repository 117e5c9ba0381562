"""MoR's attention counted against all T keys, as if every selected token still attended to the
whole sequence: the saving of recursion-wise caching (k_r² instead of k_r T) is lost."""


def mor_macs_per_token(hidden_size, intermediate_size, seq_len, capacities):
    H, I, T = hidden_size, intermediate_size, seq_len
    ks = capacity_tokens(capacities, T)
    candidates = [T] + ks[:-1]
    return sum(k * (4 * H * H + 2 * H * I) + 2 * k * T * H + n * H for k, n in zip(ks, candidates)) / T
