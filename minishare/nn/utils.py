"""Gradient utilities (PyTorch's ``torch.nn.utils`` names)."""
import math

from minishare import backend


def clip_grad_norm_(parameters, max_norm):
    """Scale all gradients by min(1, max_norm / ‖g‖), ‖g‖ the global L2 norm over every distinct
    parameter's gradient. A shared tensor is counted once (it has one gradient, the sum over its
    uses). Returns ‖g‖ before clipping, as a Python float."""
    distinct = {id(p): p for p in parameters if p.grad is not None}.values()
    total = math.sqrt(sum(float((p.grad * p.grad).sum()) for p in distinct))
    scale = max_norm / (total + 1e-6)
    if scale < 1:
        for p in distinct:
            p.grad = p.grad * backend.xp.asarray(scale, dtype=p.grad.dtype)
    return total
