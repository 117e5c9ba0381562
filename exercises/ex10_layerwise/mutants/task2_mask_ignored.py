"""Means over every position, the mask accepted and never used: padding counts like a real token."""
import numpy as np


def layer_transitions(hidden_states, attention_mask=None):
    l2, degrees = [], []
    for h_in, h_out in zip(hidden_states[:-1], hidden_states[1:]):
        distance, angle = token_transitions(h_in, h_out)
        l2.append(float(distance.mean()))
        degrees.append(float(angle.mean()))
    return {"l2": l2, "degrees": degrees}
