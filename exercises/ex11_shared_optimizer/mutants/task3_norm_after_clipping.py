"""Returning the norm after clipping (at most max_norm) instead of before: the number a training
log needs, to see how often and how hard clipping acts, is lost."""
import math


def clip_grad_norm_(params, max_norm):
    kept = [p for p in distinct(params) if p.grad is not None]
    total = math.sqrt(sum(float((p.grad ** 2).sum()) for p in kept))
    if total > max_norm:
        for p in kept:
            p.grad = p.grad * (max_norm / total)
        total = float(max_norm)
    return total
