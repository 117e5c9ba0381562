"""Adaptive Computation Time (Graves, 2016) as the Universal Transformer uses it (Dehghani et al.,
2018, Sec. 2.2): every position decides for itself how many times the shared layer refines it.

After step n has produced the state s_n of a position, a halting unit gives the probability that
the position is done:

    p_n = σ(w · s_n + b)                                        (one scalar per position)

The position halts at the first step N whose cumulated probability reaches the threshold 1 − ε,
or at the maximum number of steps:

    N = min(max_steps, min{n : p_1 + ... + p_n ≥ 1 − ε})
    R = 1 − (p_1 + ... + p_{N-1})                               the remainder
    w_n = p_n for n < N,  w_N = R,  w_n = 0 for n > N            so Σ_n w_n = 1
    y = Σ_n w_n s_n                                              the weighted state update
    ρ = N + R                                                    the ponder time (Graves, Eq. 11)

The model adds τ · mean(ρ) to its loss (τ: ``act_loss_weight``). N is piecewise constant in the
parameters, so only R carries a gradient: minimizing ρ raises the p_n before the halting step,
which brings the halt earlier. A halted position keeps its state unchanged in later steps (the
positions still running attend to it), and the loop ends when every position has halted.

This follows Graves's definitions. The Universal Transformer's released code (Tensor2Tensor)
differs in two details: it reads p_n from the input of step n rather than from its output, and it
mixes states by interpolation, y ← w_n s_n + (1 − w_n) y, instead of the weighted sum.
"""
import collections

from minishare import backend, functional as F, safeio
from minishare.nn.layers import Linear
from minishare.nn.module import Module
from minishare.tensor import Tensor

Ponder = collections.namedtuple("Ponder", "ponder_time n_updates remainder weights states")
Ponder.__doc__ = """What ACT did at each position of a batch (B, T):
    ponder_time  N + R, a Tensor (differentiable through R)
    n_updates    N, the number of steps taken, an int array
    remainder    R, a Tensor
    weights      w_n of every step taken, a Tensor (steps, B, T); sums to 1 over steps
    states       [s_0, s_1, ...]: the input and the state after each step taken"""


def check_epsilon(epsilon, name="ACT: epsilon"):
    """The one rule of ε (a configuration checks it too, as ``name``): a number in (0, 1)."""
    safeio.number(epsilon, name, "lie in (0, 1) (the halting threshold is 1 − ε)", lambda eps: 0 < eps < 1)


def sigmoid(x):
    """σ(x) = 1 / (1 + e^(−x)) = (1 + tanh(x/2)) / 2, composed from tanh (whose backward is
    already checked) rather than a new op; the tanh form never overflows."""
    return 0.5 * (1 + F.tanh(0.5 * x))


class AdaptiveComputationTime(Module):
    """The halting unit (a Linear H -> 1 and a sigmoid) and the ACT loop around a step function.

    ``forward(x, step, max_steps)``: x (B, T, H) is s_0; ``step(n, s)`` maps the state (B, T, H)
    to the next one, running step n = 0, 1, ... (the stack's layer for position n). Returns
    (y (B, T, H), Ponder). ``epsilon`` is ε of the threshold 1 − ε (Graves uses 0.01).
    """

    def __init__(self, hidden_size, epsilon=0.01):
        super().__init__()
        check_epsilon(epsilon)
        self.epsilon = epsilon
        self.halting = Linear(hidden_size, 1)

    def forward(self, x, step, max_steps):
        if max_steps < 1:
            raise ValueError(f"ACT needs at least one step, got max_steps={max_steps}")
        xp = backend.xp
        B, T, H = x.shape
        halted = xp.zeros((B, T), dtype=bool)                   # halted at an earlier step
        n_updates = xp.zeros((B, T), dtype=xp.int64)
        cumulated = Tensor(xp.zeros((B, T), dtype=x.dtype))    # Σ p_n before the halt, (B, T)
        remainder = cumulated                                   # R, (B, T)
        output, state = Tensor(xp.zeros((B, T, H), dtype=x.dtype)), x      # y and s, (B, T, H)
        weights, states = [], [x]
        for n in range(max_steps):
            running = ~halted                                   # (B, T): these take step n
            state = F.where(running[:, :, None], step(n, state), state)     # halted: carried forward
            p = sigmoid(self.halting(state)).reshape(B, T)                   # (B, T)
            # the halting decision reads values only: it is piecewise constant, no gradient
            reaches = (cumulated.data + p.data >= 1 - self.epsilon) | (n == max_steps - 1)
            halts_now, continues = running & reaches, running & ~reaches
            w = F.where(continues, p, F.where(halts_now, 1 - cumulated, 0.0))   # (B, T)
            remainder = F.where(halts_now, 1 - cumulated, remainder)
            cumulated = cumulated + F.where(continues, p, 0.0)
            output = output + w.reshape(B, T, 1) * state                     # (B, T, H)
            n_updates = n_updates + running
            halted = halted | halts_now
            weights.append(w)
            states.append(state)
            if bool(halted.all()):     # the steps left would change nothing
                break
        ponder_time = remainder + n_updates.astype(x.dtype)
        return output, Ponder(ponder_time, n_updates, remainder, F.stack(weights), states)

    def extra_repr(self):
        return f"epsilon={self.epsilon}"
