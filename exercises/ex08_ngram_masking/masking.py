"""Exercise 8: ALBERT's n-gram masking for the MLM (Lan et al., 2019, Sec. 4.1; after SpanBERT and
Joshi et al., 2019) and BERT's 80/10/10 corruption (Devlin et al., 2019, Sec. 3.1).

Every random draw comes from the ``rng`` passed in (a ``numpy.random.Generator``), so a seed
gives the same masks. Work with NumPy arrays.

The library's ``minishare/data/pretraining.py`` holds an answer: please do not look at it until
you are done.
"""
import numpy as np


def ngram_probabilities(max_n):
    """Task 1. p(n) = (1/n) / Σ_{k=1..max_n} 1/k for n = 1..max_n, as an array (6/11, 3/11, 2/11
    for max_n = 3)."""
    ### BEGIN SOLUTION task 1
    weights = 1.0 / np.arange(1, max_n + 1)
    return weights / weights.sum()
    ### END SOLUTION


def select_spans(maskable, rng, masked_lm_prob=0.15, max_n=3):
    """Task 2. The positions to predict, as a list of spans (start, length).

    ``maskable`` (T,) bool is False at positions never to select ([CLS], [SEP], padding). Select
    exactly ``max(1, round(masked_lm_prob * maskable.sum()))`` positions (the budget). Visit the
    maskable positions in a random order as span starts; for each start not selected yet, draw n
    from ``ngram_probabilities(max_n)``, then cut the span short so that it stays within the
    budget and stops before an unmaskable or already selected position. Spans never overlap."""
    ### BEGIN SOLUTION task 2
    maskable = np.asarray(maskable, dtype=bool)
    candidates = np.flatnonzero(maskable)
    budget = max(1, round(masked_lm_prob * len(candidates)))
    starts = rng.permutation(candidates)
    lengths = rng.choice(np.arange(1, max_n + 1), size=len(starts), p=ngram_probabilities(max_n))
    free = maskable.copy()
    spans, selected = [], 0
    for start, n in zip(starts.tolist(), lengths.tolist()):
        if selected == budget:
            break
        if not free[start]:
            continue
        n, length = min(n, budget - selected), 1
        while length < n and start + length < len(free) and free[start + length]:
            length += 1
        free[start:start + length] = False
        spans.append((start, length))
        selected += length
    return spans
    ### END SOLUTION


def corrupt(input_ids, positions, rng, vocab_size, mask_id, n_special):
    """Task 3. BERT's corruption of the selected ``positions``: each independently becomes
    ``mask_id`` with probability 0.8, a uniformly random ordinary token (ids n_special ..
    vocab_size - 1) with 0.1, and stays with 0.1. Returns (corrupted ids, labels): labels hold the
    original id at ``positions`` and -100 elsewhere. The input array is not modified."""
    ### BEGIN SOLUTION task 3
    input_ids = np.asarray(input_ids)
    positions = np.asarray(positions, dtype=np.int64)
    labels = np.full_like(input_ids, -100)
    labels[positions] = input_ids[positions]
    out = input_ids.copy()
    r = rng.random(len(positions))
    out[positions[r < 0.8]] = mask_id
    random = positions[(r >= 0.8) & (r < 0.9)]
    out[random] = rng.integers(n_special, vocab_size, size=len(random))
    return out, labels
    ### END SOLUTION
