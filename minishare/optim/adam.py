"""Adam and AdamW (PyTorch's ``torch.optim.Adam`` and ``torch.optim.AdamW``), and the Adam
direction that LAMB (``minishare.optim.lamb``) rescales."""
from minishare import backend
from minishare.optim.optimizer import Optimizer, check_range


def check_adam_hyperparameters(group):
    """Ranges shared by Adam, AdamW and LAMB: 0 <= β₁, β₂ < 1; eps >= 0; weight_decay >= 0."""
    betas = group["betas"]
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise ValueError(f"betas must be a pair (beta1, beta2), got {betas!r}")
    check_range("betas[0]", betas[0], 0.0, 1.0, high_inclusive=False)
    check_range("betas[1]", betas[1], 0.0, 1.0, high_inclusive=False)
    group["betas"] = tuple(betas)   # so groups compare equal whichever sequence set them
    check_range("eps", group["eps"])
    check_range("weight_decay", group["weight_decay"])


def adam_direction(grad, state, beta1, beta2, eps):
    """Advance Adam's moment estimates by one step and return the direction m̂ / (√v̂ + ε):

        t ← t + 1
        m ← β₁ m + (1 − β₁) g          (first moment: a running mean of the gradient)
        v ← β₂ v + (1 − β₂) g²         (second moment: a running mean of its square)
        m̂ = m / (1 − β₁ᵗ),  v̂ = v / (1 − β₂ᵗ)   (bias correction: m and v start at 0)

    Kingma & Ba (2015), "Adam: A Method for Stochastic Optimization", Algorithm 1. ``state``
    holds t, m and v under PyTorch's names "step", "exp_avg" and "exp_avg_sq"; empty, it starts
    them at 0. On the first step m̂ = g and v̂ = g², so every coordinate moves by about lr.
    """
    xp = backend.xp
    if not state:
        state.update(step=0, exp_avg=xp.zeros_like(grad), exp_avg_sq=xp.zeros_like(grad))
    t = state["step"] = state["step"] + 1
    # New arrays for m and v (the old ones are left as they were: analysis.memory relies on it);
    # the arithmetic then runs in place on them, with fewer temporaries of the parameter's size.
    m = beta1 * state["exp_avg"]
    m += (1 - beta1) * grad
    v = beta2 * state["exp_avg_sq"]
    g2 = (1 - beta2) * grad
    g2 *= grad
    v += g2
    state["exp_avg"], state["exp_avg_sq"] = m, v
    denominator = v / (1 - beta2 ** t)                   # v̂
    xp.sqrt(denominator, out=denominator)
    denominator += eps
    direction = m / (1 - beta1 ** t)                     # m̂
    direction /= denominator
    return direction


class Adam(Optimizer):
    """Adam with PyTorch's semantics: weight decay λ is an L2 penalty added to the gradient,

        g = ∇L(p) + λ p,    p ← p − lr · m̂ / (√v̂ + ε)     (m̂, v̂ from g: see ``adam_direction``)

    so the decay term passes through the moments and is divided by √v̂ like the rest: parameters
    with large gradients are barely decayed. AdamW fixes that.
    Kingma & Ba (2015), "Adam: A Method for Stochastic Optimization".
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    def _check_hyperparameters(self, group):
        super()._check_hyperparameters(group)
        check_adam_hyperparameters(group)

    def _update(self, param, grad, state, group):
        weight_decay = group["weight_decay"]
        g = grad + weight_decay * param if weight_decay else grad
        step = adam_direction(g, state, *group["betas"], group["eps"])
        step *= group["lr"]
        return param - step


class AdamW(Adam):
    """Adam with decoupled weight decay, PyTorch's semantics:

        p ← p − lr · λ · p                        (decay, outside the moments)
        p ← p − lr · m̂ / (√v̂ + ε)                 (Adam on the loss gradient alone)

    Every weight shrinks by the same factor (1 − lr·λ) per step whatever its gradient, as weight
    decay does for plain SGD. Loshchilov & Hutter (2019), "Decoupled Weight Decay Regularization".
    BERT trains with this rule (its code omits the bias correction), and ALBERT's code offers it
    for fine-tuning; both exclude biases and LayerNorm from the decay (give those a parameter group
    with weight_decay=0).
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)

    def _update(self, param, grad, state, group):
        lr = group["lr"]
        step = adam_direction(grad, state, *group["betas"], group["eps"])
        step *= lr
        param = param * (1 - lr * group["weight_decay"])     # a new array: the update goes into it
        param -= step
        return param
