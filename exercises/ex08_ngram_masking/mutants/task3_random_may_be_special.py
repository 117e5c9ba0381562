"""Draws random tokens from the whole vocabulary (0 .. vocab_size − 1), specials included: a
random [CLS], [SEP] or [MASK] can appear inside the text."""
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
            out[span] = rng.integers(0, vocab_size, size=length)
    return out, labels
