"""ACT's running tokens counted as attending to the running tokens only: a halted token's state is
carried forward, and the running ones still attend to it."""


def act_macs_per_token(hidden_size, intermediate_size, passes, max_steps):
    passes = np.asarray(passes)
    H, I, T = hidden_size, intermediate_size, passes.shape[1]
    running = [(passes > n).sum(axis=1).mean() for n in range(max_steps)]
    return float(sum(m * (4 * H * H + 2 * H * I + 2 * m * H + H) for m in running) / T)
