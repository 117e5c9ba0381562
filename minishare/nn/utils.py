"""Gradient utilities (PyTorch's ``torch.nn.utils`` names)."""
from minishare import backend
from minishare.tensor import Tensor


def distinct(parameters):
    """Each tensor of ``parameters`` once, in first-seen order: a tensor shared by several layers is
    one parameter (one gradient, one optimizer state, one entry in a buffer)."""
    return list({id(p): p for p in parameters}.values())


def clip_grad_norm_(parameters, max_norm):
    """Scale all gradients by min(1, max_norm / ‖g‖), ‖g‖ the global L2 norm over every distinct
    parameter's gradient. A shared tensor is counted once (it has one gradient, the sum over its
    uses). Returns ‖g‖ before clipping as a 0-d float64 Tensor, as PyTorch does: everything stays
    on the device, so clipping costs no host sync (the factor is exactly 1 when no clipping is due).
    """
    xp = backend.xp
    with_grad = [p for p in distinct(parameters) if p.grad is not None]
    squares = xp.stack([(p.grad * p.grad).sum().astype(xp.float64) for p in with_grad])   # (P,)
    total = xp.sqrt(squares.sum())
    scale = xp.minimum(max_norm / (total + 1e-6), 1.0)
    for p in with_grad:
        p.grad = p.grad * scale.astype(p.grad.dtype)
    return Tensor(total)
