"""The angle as arccos of the cosine, clipped to [−1, 1] so that rounding cannot make it NaN: the
textbook formula, exact in exact arithmetic, but near 0° and 180° the cosine's rounding error ε
becomes √(2ε) in the angle, so a 1e-7 rad angle comes out wrong."""
import numpy as np


def token_transitions(h_in, h_out):
    a, b = np.asarray(h_in, dtype=np.float64), np.asarray(h_out, dtype=np.float64)
    distance = np.sqrt(((b - a) ** 2).sum(axis=-1))
    cosine = (a * b).sum(axis=-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    return distance, np.degrees(np.arccos(np.clip(cosine, -1.0, 1.0)))
