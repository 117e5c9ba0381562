"""Exercise 18: relax a shared layer with a low-rank correction per position (Bae et al., 2024,
"Relaxed Recursive Transformers"; LoRA, Hu et al., 2021).

A trained model of N layers is tied into a few shared sets; position ℓ then computes with its
set's shared weight W plus a correction of its own, B A of rank r:

    y = x (W + B A)ᵀ + b,     x (..., in), W (out, in), A (r, in), B (out, r), b (out,).

Task 1 writes that layer as a ``minishare.Function``: ``forward`` gets backend arrays and saves on
``self`` what ``backward`` needs; ``backward(grad)`` gets dL/dy and returns one gradient per input,
in the order of forward's arguments. Never form B A (out × in): the point of the correction is
that it costs r (in + out) numbers and multiply-adds per row. Task 2 initializes B and A from the
truncated SVD of what sharing took away; task 3 counts what a relaxed stack stores.

Chapter 15 prints the library's version: please do not look at ``minishare/ops/lora.py`` or
``minishare/nn/lora.py`` until you are done. The grader does not accept them.
"""
import numpy as np

from minishare.tensor import Function


class LoRALinear(Function):
    """Task 1. y = x (W + B A)ᵀ + b.  ``forward(x, weight, lora_A, lora_B, bias)`` with x of any
    number of leading axes (..., in), weight W (out, in), lora_A A (r, in), lora_B B (out, r),
    bias b (out,) -> y (..., out); r may be 0. ``backward(grad)`` returns the gradients of x,
    W, A, B and b, each of its input's shape. The arrays' own ``@``, ``.T``, ``.reshape`` and
    ``.sum`` are all it takes."""

    def forward(self, x, weight, lora_A, lora_B, bias):
        ### BEGIN SOLUTION task 1
        self.x2 = x.reshape(-1, x.shape[-1])                      # (rows, in)
        self.u = self.x2 @ lora_A.T                               # (rows, r)
        self.weight, self.lora_A, self.lora_B, self.lead = weight, lora_A, lora_B, x.shape[:-1]
        y = self.x2 @ weight.T + self.u @ lora_B.T + bias         # (rows, out)
        return y.reshape(*self.lead, weight.shape[0])
        ### END SOLUTION

    def backward(self, grad):
        ### BEGIN SOLUTION task 1
        g2 = grad.reshape(-1, grad.shape[-1])                     # (rows, out)
        gB = g2 @ self.lora_B                                     # (rows, r)
        grad_x = (g2 @ self.weight + gB @ self.lora_A).reshape(*self.lead, -1)
        return grad_x, g2.T @ self.x2, gB.T @ self.x2, g2.T @ self.u, g2.sum(axis=0)
        ### END SOLUTION


def svd_init(original, shared, rank):
    """Task 2. (B, A), host NumPy arrays, for the position whose trained weight was ``original``
    (out, in) and whose set now shares ``shared`` (out, in): the truncated SVD of the residual,
    as the paper does it,

        original - shared = U Σ Vᵀ,     B = U_r Σ_r (out, r),   A = V_rᵀ (r, in),

    so that shared + B A is the best rank-r approximation of ``original`` near ``shared``.
    ``rank`` 0 gives B (out, 0) and A (0, in). Raise ValueError for a rank outside
    [0, min(out, in)]."""
    ### BEGIN SOLUTION task 2
    residual = np.asarray(original, dtype=np.float64) - np.asarray(shared, dtype=np.float64)
    if not 0 <= rank <= min(residual.shape):
        raise ValueError(f"rank must lie in [0, {min(residual.shape)}], got {rank}")
    U, S, Vt = np.linalg.svd(residual, full_matrices=False)
    return U[:, :rank] * S[:rank], Vt[:rank]
    ### END SOLUTION


def relaxed_count(linears, schedule, rank):
    """Task 3. The numbers a relaxed stack of linear layers stores. ``linears``: the Linears of
    one layer as (in, out, has_bias) triples; ``schedule``: the set each of the N positions uses
    (``[0, 1, 0, 1]`` is Cycle with M = 2 of N = 4). Every distinct set stores its W and b once,
    however many positions use it; every position stores its own A and B for each Linear."""
    ### BEGIN SOLUTION task 3
    per_set = sum(i * o + (o if bias else 0) for i, o, bias in linears)
    per_position = sum(rank * (i + o) for i, o, _ in linears)
    return len(set(schedule)) * per_set + len(schedule) * per_position
    ### END SOLUTION


def break_even_rank(linears, schedule):
    """Task 3. The largest rank at which the relaxed stack (``relaxed_count``) stores fewer numbers
    than the N layers it was made from, each with its own W and b; -1 if even rank 0 does not
    (every position its own set)."""
    ### BEGIN SOLUTION task 3
    not_shared = len(schedule) * sum(i * o + (o if bias else 0) for i, o, bias in linears)
    largest = min(min(i, o) for i, o, _ in linears)
    fewer = [r for r in range(largest + 1) if relaxed_count(linears, schedule, r) < not_shared]
    return max(fewer) if fewer else -1
    ### END SOLUTION
