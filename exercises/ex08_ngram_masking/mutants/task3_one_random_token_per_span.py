"""Draws one random token for the whole span (every position of a random span gets the same
id) instead of one per token."""
import numpy as np


def corrupt(input_ids, spans, rng, vocab_size, mask_id, n_special):
    input_ids = np.asarray(input_ids)
    out, labels = input_ids.copy(), np.full_like(input_ids, -100)
    for start, length in spans:
        span = slice(start, start + length)
        labels[span] = input_ids[span]
        r = rng.random()
        if r < 0.8:
            out[span] = mask_id
        elif r < 0.9:
            out[span] = rng.integers(n_special, vocab_size)
    return out, labels
