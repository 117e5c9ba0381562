"""ACT counted as if every token took every step up to the deepest pass: what this library's loop
computes, not the compute per token it accounts."""


def act_macs_per_token(hidden_size, intermediate_size, passes, max_steps):
    passes = np.asarray(passes)
    H, I, T = hidden_size, intermediate_size, passes.shape[1]
    steps = min(max_steps, int(passes.max()))
    return float(steps * T * (4 * H * H + 2 * H * I + 2 * T * H + H) / T)
