"""Means taken over the wrong axis first: each example's mean over its real tokens, then the mean
of those over the examples. Right when every example has as many real tokens, but a short
example then weighs as much as a long one, and the definition is one weight per token."""
import numpy as np


def layer_transitions(hidden_states, attention_mask=None):
    first = np.asarray(hidden_states[0])
    keep = np.ones(first.shape[:2]) if attention_mask is None else np.asarray(attention_mask, dtype=np.float64)
    if keep.sum() == 0:
        raise ValueError("no non-padding token to average over")
    per_example = np.maximum(keep.sum(axis=1), 1)                      # (B,)
    used = keep.sum(axis=1) > 0
    l2, degrees = [], []
    for h_in, h_out in zip(hidden_states[:-1], hidden_states[1:]):
        distance, angle = token_transitions(h_in, h_out)
        l2.append(float(((distance * keep).sum(axis=1) / per_example)[used].mean()))
        degrees.append(float(((angle * keep).sum(axis=1) / per_example)[used].mean()))
    return {"l2": l2, "degrees": degrees}
