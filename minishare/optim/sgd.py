"""Stochastic gradient descent, with momentum and Nesterov momentum (PyTorch's ``torch.optim.SGD``)."""
from minishare.optim.optimizer import Optimizer, check_range


class SGD(Optimizer):
    """Stochastic gradient descent, with PyTorch's semantics (its ``dampening`` fixed at 0).

    With weight decay λ added to the gradient as an L2 penalty (λ/2)‖p‖² on the loss would,
        g = ∇L(p) + λ p
    one step is
        plain       p ← p − lr · g
        momentum    b ← μ b + g   (b = g on the first step),   p ← p − lr · b
        Nesterov    b as above,                                p ← p − lr · (g + μ b)

    Momentum is Polyak's heavy ball (Polyak, 1964, "Some methods of speeding up the convergence of
    iteration methods"); the Nesterov form is Sutskever, Martens, Dahl & Hinton (2013), "On the
    importance of initialization and momentum in deep learning", rewritten, as PyTorch does, with
    lr outside the buffer: changing lr (a schedule) rescales the whole step at once.

    ``state[p]["momentum_buffer"]`` is b (only with momentum).
    """

    def __init__(self, params, lr, momentum=0.0, weight_decay=0.0, nesterov=False):
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay,
                                      nesterov=nesterov))

    def _check_hyperparameters(self, group):
        super()._check_hyperparameters(group)
        check_range("momentum", group["momentum"], 0.0, 1.0, high_inclusive=False)
        check_range("weight_decay", group["weight_decay"])
        if group["nesterov"] not in (True, False):
            raise ValueError(f"nesterov must be True or False, got {group['nesterov']!r}")
        if group["nesterov"] and group["momentum"] == 0:
            raise ValueError("nesterov=True needs momentum > 0 (Nesterov momentum without "
                             "momentum is plain SGD)")

    def _update(self, param, grad, state, group):
        lr, mu, weight_decay = group["lr"], group["momentum"], group["weight_decay"]
        g = grad + weight_decay * param if weight_decay else grad
        if mu:
            # b₁ = g₁ (a copy: the buffer must own its array), then b ← μ b + g
            b = mu * state["momentum_buffer"] + g if "momentum_buffer" in state else g.copy()
            state["momentum_buffer"] = b
            g = g + mu * b if group["nesterov"] else b
        return param - lr * g
