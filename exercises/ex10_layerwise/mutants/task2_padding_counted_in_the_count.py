"""Padding zeroed in the sum but not left out of the count: the masked sum divided by B · T, so
every mean shrinks by the fraction of real tokens."""
import numpy as np


def layer_transitions(hidden_states, attention_mask=None):
    first = np.asarray(hidden_states[0])
    keep = np.ones(first.shape[:2]) if attention_mask is None else np.asarray(attention_mask, dtype=np.float64)
    if keep.sum() == 0:
        raise ValueError("no non-padding token to average over")
    l2, degrees = [], []
    for h_in, h_out in zip(hidden_states[:-1], hidden_states[1:]):
        distance, angle = token_transitions(h_in, h_out)
        l2.append(float((distance * keep).sum() / keep.size))
        degrees.append(float((angle * keep).sum() / keep.size))
    return {"l2": l2, "degrees": degrees}
