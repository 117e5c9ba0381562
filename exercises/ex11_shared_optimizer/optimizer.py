"""Exercise 11: an optimizer that updates each shared tensor once (ALBERT, Lan et al., 2019,
Sec. 3.1 and 4.3: sharing cuts parameters and optimizer state, not computation).

A weight shared by L layers is one Parameter with one gradient (the sum over its uses). A naive
parameter list, built layer by layer, holds it L times: ``[p for layer in layers for p in
layer.parameters()]``. Stepping each entry would move it L times and give it L sets of state.

The library's ``minishare/optim/optimizer.py`` and ``minishare/nn/utils.py`` hold answers: please
do not look at them until you are done (the grader does not let a submission use them). Work with
the parameters' ``.data`` and ``.grad`` (NumPy arrays); replace ``p.data`` with a new array rather
than writing into it.
"""
import math

import numpy as np


def distinct(params):
    """Task 1. The parameters of ``params`` with duplicates (the same object listed again)
    removed, in the order of their first appearance. Two different tensors that happen to hold
    equal values are both kept."""
    ### BEGIN SOLUTION task 1
    seen, kept = set(), []
    for p in params:
        if id(p) not in seen:
            seen.add(id(p))
            kept.append(p)
    return kept
    ### END SOLUTION


class Adam:
    """Task 2. Adam (Kingma & Ba, 2015) without weight decay, one state per distinct tensor:
        t ← t + 1,  m ← β₁ m + (1 − β₁) g,  v ← β₂ v + (1 − β₂) g²,
        p ← p − lr · m̂ / (√v̂ + ε),  m̂ = m / (1 − β₁ᵗ),  v̂ = v / (1 − β₂ᵗ).
    ``state`` maps id(p) to {"step": t, "exp_avg": m, "exp_avg_sq": v}. A parameter whose grad is
    None is skipped (state included)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        ### BEGIN SOLUTION task 2
        self.params, self.lr, self.betas, self.eps = distinct(params), lr, betas, eps
        self.state = {}
        ### END SOLUTION

    def step(self):
        ### BEGIN SOLUTION task 2
        beta1, beta2 = self.betas
        for p in self.params:
            if p.grad is None:
                continue
            s = self.state.setdefault(id(p), {"step": 0, "exp_avg": np.zeros_like(p.grad),
                                              "exp_avg_sq": np.zeros_like(p.grad)})
            s["step"] += 1
            s["exp_avg"] = beta1 * s["exp_avg"] + (1 - beta1) * p.grad
            s["exp_avg_sq"] = beta2 * s["exp_avg_sq"] + (1 - beta2) * p.grad * p.grad
            m_hat = s["exp_avg"] / (1 - beta1 ** s["step"])
            v_hat = s["exp_avg_sq"] / (1 - beta2 ** s["step"])
            p.data = p.data - self.lr * m_hat / (np.sqrt(v_hat) + self.eps)
        ### END SOLUTION

    def zero_grad(self):
        ### BEGIN SOLUTION task 2
        for p in self.params:
            p.grad = None
        ### END SOLUTION


def clip_grad_norm_(params, max_norm):
    """Task 3. Scale every gradient by min(1, max_norm / ‖g‖), with ‖g‖ the L2 norm over all
    gradients of the distinct parameters (a shared tensor counted once). Parameters without a
    grad are ignored. Returns ‖g‖ before clipping, a Python float."""
    ### BEGIN SOLUTION task 3
    kept = [p for p in distinct(params) if p.grad is not None]
    total = math.sqrt(sum(float((p.grad ** 2).sum()) for p in kept))
    if total > max_norm:
        for p in kept:
            p.grad = p.grad * (max_norm / total)
    return total
    ### END SOLUTION
