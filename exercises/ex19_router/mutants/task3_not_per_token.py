"""The sum over the steps not divided by T: the compute of the whole sequence, not per token."""


def mor_macs_per_token(hidden_size, intermediate_size, seq_len, capacities):
    H, I, T = hidden_size, intermediate_size, seq_len
    ks = capacity_tokens(capacities, T)
    candidates = [T] + ks[:-1]
    return float(sum(k * (4 * H * H + 2 * H * I) + 2 * k * k * H + n * H for k, n in zip(ks, candidates)))
