"""The global norm summed over the list as given: a gradient shared by L layers is counted L
times, so the norm grows with the depth of sharing and clipping starts too early."""
import math


def clip_grad_norm_(params, max_norm):
    params = list(params)
    total = math.sqrt(sum(float((p.grad ** 2).sum()) for p in params if p.grad is not None))
    if total > max_norm:
        for p in distinct(params):
            if p.grad is not None:
                p.grad = p.grad * (max_norm / total)
    return total
