"""The angle as 2·arcsin(‖û − v̂‖ / 2), chapter 9's listing: accurate near 0°, where arccos is
not, but arcsin is flat at 1, so near 180° it loses half the digits in the same way."""
import numpy as np


def token_transitions(h_in, h_out):
    a, b = np.asarray(h_in, dtype=np.float64), np.asarray(h_out, dtype=np.float64)
    distance = np.sqrt(((b - a) ** 2).sum(axis=-1))
    u = a / np.maximum(np.linalg.norm(a, axis=-1, keepdims=True), 1e-300)
    v = b / np.maximum(np.linalg.norm(b, axis=-1, keepdims=True), 1e-300)
    chord = np.sqrt(((u - v) ** 2).sum(axis=-1))
    return distance, np.degrees(2 * np.arcsin(np.clip(chord / 2, 0.0, 1.0)))
