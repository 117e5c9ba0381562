"""Exercise 13: the Universal Transformer (Dehghani et al., 2018, Sec. 2.1 and 2.2): one layer
applied at every depth step t, with a coordinate embedding added before each step, and Adaptive
Computation Time (Graves, 2016) deciding how many steps a position takes.

Task 1 asks for the coordinate embedding in the layout of the authors' released code
(Tensor2Tensor's ``get_timing_signal_1d``, used by its Universal Transformer for the position and
for the step): sines in the first half of the channels, cosines in the second. The library and
the book (chapter 6) use the paper's interleaved layout, a different function.

The library holds answers: ``minishare/nn/transformer.py`` (``Stack`` with ``timestep=True``) for
task 2, and ``minishare/nn/act.py`` (a batched ACT module) for task 3. Please do not look at them
until you are done; the grader does not let a submission use them.
"""

import numpy as np

from minishare.nn import FFN, Module, MultiHeadAttention, Residual


def timestep_signal(t, T, H):
    """Task 1. The coordinate embedding added before step t, a NumPy array (T, H), in
    Tensor2Tensor's layout. With K = H // 2 timescales and the frequencies
        w_j = 10000^(−j / max(K − 1, 1)),   j = 0 .. K − 1   (from 1 down to 1/10000),
    row p (the position, 0-based) is
        P[p, j]     = sin(p · w_j) + sin(t · w_j)         the first K channels
        P[p, K + j] = cos(p · w_j) + cos(t · w_j)         the next K channels
    and, when H is odd, a last channel of zeros. t is the step, 0-based."""
    ### BEGIN SOLUTION task 1
    K = H // 2
    freq = 10000.0 ** (-np.arange(K) / max(K - 1, 1))            # (K,)
    angles = np.arange(T)[:, None] * freq                          # (T, K)
    signal = np.zeros((T, H))
    signal[:, :K] = np.sin(angles) + np.sin(t * freq)
    signal[:, K:2 * K] = np.cos(angles) + np.cos(t * freq)
    return signal                                                  # an odd H keeps its last zeros
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
    and the ponder cost is N + R. An empty list is a ValueError."""
    ### BEGIN SOLUTION task 3
    total = 0.0
    for n, h in enumerate(halting_probabilities, start=1):
        if total + h >= 1 - epsilon or n == len(halting_probabilities):
            remainder = 1.0 - total
            return n, remainder, [*halting_probabilities[:n - 1], remainder]
        total += h
    raise ValueError("act_halting needs at least one halting probability")
    ### END SOLUTION
