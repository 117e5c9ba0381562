"""Exercise 19: a capacity-limited expert-choice router over a shared block (Mixture-of-Recursions,
Bae et al., 2025), and the compute per token it saves against ACT.

The library holds answers: ``minishare/nn/mor.py`` (``capacity_tokens``, ``MixtureOfRecursions``)
for tasks 1 and 2 and ``minishare/analysis/mor.py`` for task 3. Please do not look at them until
you are done; the grader does not let a submission use them.
"""

import numpy as np

from minishare import functional as F
from minishare.nn import Linear, Module, ModuleList


def capacity_tokens(capacities, seq_len):
    """Task 1. How many of T = ``seq_len`` tokens each recursion step takes: k_r = ⌊c_r T⌋, at
    least 1, for every capacity c_r in ``capacities`` (a list of numbers). Refuse (ValueError) an
    empty list, a capacity outside (0, 1], and capacities that grow from one step to the next
    (step r chooses among the tokens of step r − 1). ``capacity_tokens([1, 0.5, 0.25], 8) ==
    [8, 4, 2]``; ``capacity_tokens([1, 0.1], 7) == [7, 1]``."""
    ### BEGIN SOLUTION task 1
    if not len(capacities) or any(not 0 < c <= 1 for c in capacities):
        raise ValueError("capacities must be a non-empty list of numbers in (0, 1]")
    if any(b > a for a, b in zip(capacities, capacities[1:])):
        raise ValueError("capacities must not grow: step r chooses among the tokens of step r - 1")
    return [max(1, int(c * seq_len + 1e-9)) for c in capacities]
    ### END SOLUTION


class ExpertChoiceRouter(Module):
    """Task 2. Expert-choice routing (Bae et al., 2025) over a shared block: at step r,
    for the candidate tokens (all T at step 0, afterwards those selected at step r − 1),

        g_t = σ(router_r(h_t))                  one score per candidate, router_r = self.routers[r]
        the top k_r candidates by g are selected (k_r from task 1; ties go to the earlier position)
        h_t ← h_t + g_t · f_t                   for the selected tokens only, where f is
                                                block(r, states of the selected tokens)

    ``block(r, s)`` takes the selected tokens' states gathered into a (B, k_r, H) Tensor, in
    ascending position order, and returns (B, k_r, H): the selected tokens are processed together,
    as a shorter sequence (they attend only to each other). Unselected tokens keep their state.
    Gradients must reach x, the block and every router (through g). σ: ``minishare.nn.act.sigmoid``
    or 1 / (1 + e^(−z)) written with Tensor ops."""

    def __init__(self, hidden_size, capacities):
        super().__init__()
        # given: one router (a Linear H -> 1) per recursion step
        self.capacities = list(capacities)
        self.routers = ModuleList(Linear(hidden_size, 1) for _ in self.capacities)

    def forward(self, x, block):
        """x (B, T, H) Tensor -> (h (B, T, H) Tensor, active): ``active`` is a NumPy bool array
        (N_r, B, T), True where token t of sequence b took step r."""
        ### BEGIN SOLUTION task 2
        B, T, H = x.shape
        rows = np.arange(B)[:, None]
        candidates = np.broadcast_to(np.arange(T), (B, T))
        active = np.zeros((len(self.routers), B, T), dtype=bool)
        h = x
        for r, k in enumerate(capacity_tokens(self.capacities, T)):
            n = candidates.shape[1]
            z = self.routers[r](F.gather_tokens(h, candidates)).reshape(B, n)
            g = 0.5 * (1 + F.tanh(0.5 * z))                                  # σ(z)
            top = np.sort(np.argsort(-g.numpy(), axis=1, kind="stable")[:, :k], axis=1)
            selected = np.take_along_axis(candidates, top, axis=1)
            update = block(r, F.gather_tokens(h, selected))
            h = F.scatter_add_tokens(h, selected, g[rows, top].reshape(B, k, 1) * update)
            active[r, rows, selected] = True
            candidates = selected
        return h, active
        ### END SOLUTION


def mor_macs_per_token(hidden_size, intermediate_size, seq_len, capacities):
    """Task 3a. Multiply-accumulates per token of the recursion steps of expert-choice routing
    (the prelude and the head left out), a float: step r costs, for the sequence,

        k_r (4H² + 2HI)     projections and FFN of the k_r selected tokens
        2 k_r² H            their attention: each of the k_r queries against the k_r selected keys
        n_r H               the router on the n_r candidates (n_0 = T, then n_r = k_{r−1})

    summed over the steps and divided by T. H = ``hidden_size``, I = ``intermediate_size``."""
    ### BEGIN SOLUTION task 3
    H, I, T = hidden_size, intermediate_size, seq_len
    ks = capacity_tokens(capacities, T)
    candidates = [T] + ks[:-1]
    return sum(k * (4 * H * H + 2 * H * I) + 2 * k * k * H + n * H for k, n in zip(ks, candidates)) / T
    ### END SOLUTION


def act_macs_per_token(hidden_size, intermediate_size, passes, max_steps):
    """Task 3b. The same for ACT, from the passes each token took: ``passes`` an int array (B, T).
    Step n is taken by the m_n tokens with passes > n (m_n: the mean over the B sequences); each
    attends to all T tokens (a halted token's keys stay in the cache) and the halting unit (H -> 1)
    runs on it: step n costs m_n (4H² + 2HI + 2TH + H); sum over n < ``max_steps``, divide by T."""
    ### BEGIN SOLUTION task 3
    passes = np.asarray(passes)
    H, I, T = hidden_size, intermediate_size, passes.shape[1]
    running = [(passes > n).sum(axis=1).mean() for n in range(max_steps)]
    return float(sum(m * (4 * H * H + 2 * H * I + 2 * T * H + H) for m in running) / T)
    ### END SOLUTION
