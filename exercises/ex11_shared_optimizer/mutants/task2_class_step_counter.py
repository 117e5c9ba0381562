"""Adam whose step counter lives on the class (``Adam.t += 1``), as if "the training step" were
one global number: with a single optimizer and gradients everywhere it is right, but two
optimizers advance each other's bias correction."""
import numpy as np


class Adam:
    t = 0

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params, self.lr, self.betas, self.eps = distinct(params), lr, betas, eps
        self.state = {}

    def step(self):
        beta1, beta2 = self.betas
        Adam.t += 1
        for p in self.params:
            if p.grad is None:
                continue
            s = self.state.setdefault(id(p), {"step": 0, "exp_avg": np.zeros_like(p.grad),
                                              "exp_avg_sq": np.zeros_like(p.grad)})
            s["step"] += 1
            s["exp_avg"] = beta1 * s["exp_avg"] + (1 - beta1) * p.grad
            s["exp_avg_sq"] = beta2 * s["exp_avg_sq"] + (1 - beta2) * p.grad * p.grad
            m_hat = s["exp_avg"] / (1 - beta1 ** Adam.t)
            v_hat = s["exp_avg_sq"] / (1 - beta2 ** Adam.t)
            p.data = p.data - self.lr * m_hat / (np.sqrt(v_hat) + self.eps)

    def zero_grad(self):
        for p in self.params:
            p.grad = None
