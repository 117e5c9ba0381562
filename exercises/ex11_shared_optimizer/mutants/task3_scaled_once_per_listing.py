"""The norm of the distinct gradients, right, but the scaling applied to every entry of the list:
a tensor listed three times is scaled three times, by the factor cubed."""
import math


def clip_grad_norm_(params, max_norm):
    params = list(params)
    kept = [p for p in distinct(params) if p.grad is not None]
    total = math.sqrt(sum(float((p.grad ** 2).sum()) for p in kept))
    if total > max_norm:
        for p in params:
            if p.grad is not None:
                p.grad = p.grad * (max_norm / total)
    return total
