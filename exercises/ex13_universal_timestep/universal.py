"""Exercise 13: the Universal Transformer (Dehghani et al., 2018, Sec. 2.1 and 2.2): one layer
applied at every depth step t, with a coordinate embedding added before each step, and Adaptive
Computation Time (Graves, 2016) deciding how many steps a position takes.

The library holds answers: ``minishare/nn/transformer.py`` (``timestep_signal``, ``Stack``) for
tasks 1 and 2, and ``minishare/nn/act.py`` (a batched ACT module) for task 3. Please do not look
at them until you are done.
"""

import numpy as np

from minishare.nn import FFN, Module, MultiHeadAttention, Residual


def timestep_signal(t, T, H):
    """Task 1. The coordinate embedding added before step t, a NumPy array (T, H), H even:
        P[p, 2j]   = sin(p / 10000^(2j/H)) + sin(t / 10000^(2j/H))
        P[p, 2j+1] = cos(p / 10000^(2j/H)) + cos(t / 10000^(2j/H))
    (position sinusoids of Vaswani et al. plus the same sinusoids of the step)."""
    ### BEGIN SOLUTION task 1
    freq = 1.0 / 10000.0 ** (np.arange(0, H, 2) / H)              # (H/2,)
    angles = np.arange(T)[:, None] * freq                          # (T, H/2)
    signal = np.zeros((T, H))
    signal[:, 0::2] = np.sin(angles) + np.sin(t * freq)
    signal[:, 1::2] = np.cos(angles) + np.cos(t * freq)
    return signal
    ### END SOLUTION


class UniversalEncoder(Module):
    """Task 2. ``steps`` applications of ONE Post-LN layer, self-attention then FFN:
        for t in 0..steps-1:  x ← x + timestep_signal(t, T, H);  x ← ffn(attention(x, mask))
    with ``self.attention = Residual(MultiHeadAttention(H, heads), H, "post", 0.0, 1e-12)`` and
    ``self.ffn = Residual(FFN(H, intermediate, "relu"), H, "post", 0.0, 1e-12)`` built once in
    __init__ (names as given). x (B, T, H) -> (B, T, H)."""

    def __init__(self, hidden_size, num_heads, intermediate_size, steps):
        super().__init__()
        self.steps = steps
        ### BEGIN SOLUTION task 2
        self.attention = Residual(MultiHeadAttention(hidden_size, num_heads), hidden_size, "post", 0.0, 1e-12)
        self.ffn = Residual(FFN(hidden_size, intermediate_size, "relu"), hidden_size, "post", 0.0, 1e-12)
        ### END SOLUTION

    def forward(self, x, mask=None):
        ### BEGIN SOLUTION task 2
        B, T, H = x.shape
        for t in range(self.steps):
            x = x + timestep_signal(t, T, H).astype(x.dtype)
            x = self.ffn(self.attention(x, mask=mask))
        return x
        ### END SOLUTION


def act_halting(halting_probabilities, epsilon=0.01):
    """Task 3. Adaptive Computation Time for one position (Graves, 2016, Sec. 2; used by the UT,
    Sec. 2.2). ``halting_probabilities`` h_1, h_2, ... in (0, 1) are what the halting unit outputs
    at each step. The position halts at the first step N where h_1 + ... + h_N ≥ 1 − ε (or at the
    last step given). Returns (N, R, weights):
        R = 1 − (h_1 + ... + h_{N−1})   the remainder,
        weights = [h_1, ..., h_{N−1}, R]  how the N states are mixed (they sum to 1),
    and the ponder cost is N + R."""
    ### BEGIN SOLUTION task 3
    total = 0.0
    for n, h in enumerate(halting_probabilities, start=1):
        if total + h >= 1 - epsilon or n == len(halting_probabilities):
            remainder = 1.0 - total
            return n, remainder, [*halting_probabilities[:n - 1], remainder]
        total += h
    raise ValueError("act_halting needs at least one halting probability")
    ### END SOLUTION
