"""Adam over the list as given, its state keyed by identity: one state per tensor, as asked, but
a tensor listed twice (a tied table under both its names) is updated twice per step, its
gradient fed twice into the moments."""
import numpy as np


class Adam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params, self.lr, self.betas, self.eps = list(params), lr, betas, eps
        self.state = {}

    def step(self):
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

    def zero_grad(self):
        for p in self.params:
            p.grad = None
