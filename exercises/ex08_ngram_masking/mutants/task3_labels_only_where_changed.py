"""Puts labels only where the input changed ([MASK] or a random token): the 10% of spans kept
unchanged get no label, so the model is never asked to predict a token it can see."""
import numpy as np


def corrupt(input_ids, spans, rng, vocab_size, mask_id, n_special):
    input_ids = np.asarray(input_ids)
    out, labels = input_ids.copy(), np.full_like(input_ids, -100)
    for start, length in spans:
        span = slice(start, start + length)
        r = rng.random()
        if r < 0.8:
            out[span] = mask_id
            labels[span] = input_ids[span]
        elif r < 0.9:
            out[span] = rng.integers(n_special, vocab_size, size=length)
            labels[span] = input_ids[span]
    return out, labels
