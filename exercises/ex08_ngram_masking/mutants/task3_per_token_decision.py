"""Decides 80/10/10 for each token, as BERT (and the library's ``mask_tokens``) does, instead of
once per span: a span comes out masked in part, which SpanBERT's span-level rule never does."""
import numpy as np


def corrupt(input_ids, spans, rng, vocab_size, mask_id, n_special):
    input_ids = np.asarray(input_ids)
    positions = np.array([p for start, length in spans for p in range(start, start + length)], dtype=np.int64)
    out, labels = input_ids.copy(), np.full_like(input_ids, -100)
    labels[positions] = input_ids[positions]
    r = rng.random(len(positions))
    out[positions[r < 0.8]] = mask_id
    random = positions[(r >= 0.8) & (r < 0.9)]
    out[random] = rng.integers(n_special, vocab_size, size=len(random))
    return out, labels
