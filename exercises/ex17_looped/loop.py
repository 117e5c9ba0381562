"""Exercise 17: a looped block (Yang et al., 2023; Geiping et al., 2025): one layer iterated r
times, the input re-injected before every iteration, r chosen when the model runs, and
backpropagation through the last k iterations only.

The library holds answers: ``minishare/sharing.py`` (``looped``, ``looped_plan``) for task 1 and
``minishare/nn/looped.py`` (``LoopedStack``) for tasks 2 and 3. Please do not look at them until
you are done; the grader does not let a submission use them.
"""

import numpy as np

import minishare
from minishare.nn import FFN, Module, MultiHeadAttention, Residual


def looped_schedule(n_prelude, n_recurrent, n_coda, iterations):
    """Task 1. The parameter set of each position of a looped stack run for r = ``iterations``:
    P = ``n_prelude`` sets 0..P-1 once each, then the R = ``n_recurrent`` sets P..P+R-1 in order,
    r times over, then the C = ``n_coda`` sets P+R..P+R+C-1 once each: a list of P + r·R + C ints.
    ``looped_schedule(1, 1, 1, 3) == [0, 1, 1, 1, 2]``. Refuse (ValueError) n_recurrent < 1,
    iterations < 1 and a negative n_prelude or n_coda."""
    ### BEGIN SOLUTION task 1
    if n_recurrent < 1 or iterations < 1 or n_prelude < 0 or n_coda < 0:
        raise ValueError("a looped stack needs n_recurrent >= 1, iterations >= 1, n_prelude, n_coda >= 0")
    block = list(range(n_prelude, n_prelude + n_recurrent))
    return list(range(n_prelude)) + block * iterations + list(range(n_prelude + n_recurrent,
                                                                   n_prelude + n_recurrent + n_coda))
    ### END SOLUTION


class LoopedBlock(Module):
    """Tasks 2 and 3. ONE Post-LN layer, self-attention then FFN, iterated with input injection
    (Yang et al., 2023, Sec. 3):
        s_0 = 0;   for t in 1..r:   s_t = layer(s_{t−1} + x)        layer(z) = ffn(attention(z))
    with ``self.attention`` and ``self.ffn``, built once in __init__ (given). x and every state s
    are (B, T, H)."""

    def __init__(self, hidden_size, num_heads, intermediate_size):
        super().__init__()
        # given: the one layer, built once (every iteration must use these two, and no others)
        self.attention = Residual(MultiHeadAttention(hidden_size, num_heads), hidden_size, "post", 0.0, 1e-12)
        self.ffn = Residual(FFN(hidden_size, intermediate_size, "relu"), hidden_size, "post", 0.0, 1e-12)

    def iterate(self, s, x, n):
        """Task 2. ``n`` iterations from the state ``s`` (a Tensor): n times s <- layer(s + x),
        x re-injected before each. Returns the state; every iteration is part of the graph."""
        ### BEGIN SOLUTION task 2
        for _ in range(n):
            s = self.ffn(self.attention(s + x))
        return s
        ### END SOLUTION

    def forward(self, x, iterations, backprop_iterations=None):
        """Task 3. s_r from s_0 = 0 (zeros of x's shape and dtype). With ``backprop_iterations=k``
        (None, or k >= r: all) only the last k iterations build a graph: the first r − k run under
        ``minishare.no_grad()``, so s_{r−k} enters the last k as a constant. The output is the
        same for every k; the gradient is that of s_r with s_{r−k} held fixed (x still gets the
        gradient of its last k injections). Use ``iterate``."""
        ### BEGIN SOLUTION task 3
        k = iterations if backprop_iterations is None else min(backprop_iterations, iterations)
        s = minishare.tensor(np.zeros(x.shape, dtype=x.dtype))
        with minishare.no_grad():
            s = self.iterate(s, x, iterations - k)
        return self.iterate(s, x, k)
        ### END SOLUTION
