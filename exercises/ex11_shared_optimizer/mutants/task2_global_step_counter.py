"""Adam with one step counter for the optimizer, incremented once per ``step()``: the same as
per-tensor counts while every tensor gets a gradient at every step, but a tensor that first gets
one at step 3 is bias-corrected as if it had three steps of history."""
import numpy as np


class Adam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.params, self.lr, self.betas, self.eps = distinct(params), lr, betas, eps
        self.state, self.t = {}, 0

    def step(self):
        beta1, beta2 = self.betas
        self.t += 1
        for p in self.params:
            if p.grad is None:
                continue
            s = self.state.setdefault(id(p), {"step": 0, "exp_avg": np.zeros_like(p.grad),
                                              "exp_avg_sq": np.zeros_like(p.grad)})
            s["step"] = self.t
            s["exp_avg"] = beta1 * s["exp_avg"] + (1 - beta1) * p.grad
            s["exp_avg_sq"] = beta2 * s["exp_avg_sq"] + (1 - beta2) * p.grad * p.grad
            m_hat = s["exp_avg"] / (1 - beta1 ** self.t)
            v_hat = s["exp_avg_sq"] / (1 - beta2 ** self.t)
            p.data = p.data - self.lr * m_hat / (np.sqrt(v_hat) + self.eps)

    def zero_grad(self):
        for p in self.params:
            p.grad = None
