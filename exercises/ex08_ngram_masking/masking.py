"""Exercise 8: ALBERT's n-gram masking for the MLM (Lan et al., 2019, Sec. 4.1), over whole
words, SpanBERT's span lengths and its span-level corruption (Joshi et al., 2020, Sec. 3.1).

Every random draw comes from the ``rng`` passed in (a ``numpy.random.Generator``), so a seed
gives the same masks. Work with NumPy arrays.

Chapter 8 prints the library's ``select_spans`` (minishare/data/pretraining.py), which selects
spans of single tokens and corrupts each token on its own: these tasks differ from it (whole
words, a geometric length option, one decision per span), and the grader does not accept
``minishare.data`` in this exercise. Please do not look at it until you are done.
"""
import numpy as np


def ngram_probabilities(max_n, p=None):
    """Task 1. The distribution of span lengths n = 1..max_n, as an array.

    - ``p=None``: ALBERT's p(n) = (1/n) / Σ_{k=1..max_n} 1/k (6/11, 3/11, 2/11 for max_n = 3).
    - ``p`` a number in (0, 1]: SpanBERT's geometric distribution clipped at max_n, p(n) ∝
      p (1 − p)^(n−1), renormalized over n = 1..max_n (p = 0.2, max_n = 10: a mean of 3.8)."""
    ### BEGIN SOLUTION task 1
    n = np.arange(1, max_n + 1)
    weights = 1.0 / n if p is None else p * (1.0 - p) ** (n - 1)
    return weights / weights.sum()
    ### END SOLUTION


def select_spans(maskable, rng, masked_lm_prob=0.15, max_n=3, word_start=None):
    """Task 2. The positions to predict, as a list of spans (start, length in tokens), each span
    n whole words (ALBERT's n-gram masking over whole words, as BERT's whole-word masking).

    ``maskable`` (T,) bool is False at positions never to select ([CLS], [SEP], padding).
    ``word_start`` (T,) bool marks the first piece of each word (None: every token is a word); a
    word is a maskable token that starts a word (or follows an unmaskable one) together with the
    maskable pieces after it up to the next word start. The budget is
    ``max(1, round(masked_lm_prob * maskable.sum()))`` tokens.

    Visit the words in a random order as span starts; for each word not selected yet, draw n
    from ``ngram_probabilities(max_n)``, and take up to n words from it: stop before a word that
    is selected already, before an unmaskable position or the end, and before a word whose
    tokens would pass the budget. If even the first word would pass the budget, skip it and go
    on (a later, shorter word may fit). Spans never overlap, never split a word, and never hold
    more tokens than the budget; when every word is one token they fill it exactly."""
    ### BEGIN SOLUTION task 2
    maskable = np.asarray(maskable, dtype=bool)
    T = len(maskable)
    word_start = np.ones(T, dtype=bool) if word_start is None else np.asarray(word_start, dtype=bool)
    after_unmaskable = np.concatenate([[True], ~maskable[:-1]])
    begins = maskable & (word_start | after_unmaskable)          # the first token of every word
    ends = np.empty(T, dtype=np.int64)                           # ends[b]: one past b's last piece
    following = T
    for i in range(T - 1, -1, -1):
        ends[i] = following
        if begins[i] or not maskable[i]:
            following = i
    budget = max(1, round(masked_lm_prob * int(maskable.sum())))
    words = rng.permutation(np.flatnonzero(begins))
    lengths = rng.choice(np.arange(1, max_n + 1), size=len(words), p=ngram_probabilities(max_n))
    free = maskable.copy()
    spans, selected = [], 0
    for start, n in zip(words.tolist(), lengths.tolist()):
        if selected == budget:
            break
        if not free[start]:
            continue
        end, taken = start, 0
        while taken < n and end < T and begins[end] and free[end] and selected + ends[end] - start <= budget:
            end, taken = int(ends[end]), taken + 1
        if taken == 0:                                           # its first word passes the budget
            continue
        free[start:end] = False
        spans.append((start, end - start))
        selected += end - start
    return spans
    ### END SOLUTION


def corrupt(input_ids, spans, rng, vocab_size, mask_id, n_special):
    """Task 3. SpanBERT's corruption of the selected ``spans`` (start, length), decided once per
    span, not per token: with probability 0.8 every token of the span becomes ``mask_id``, with
    0.1 every token of it becomes a uniformly random ordinary token (ids n_special ..
    vocab_size - 1, drawn independently for each token), and with 0.1 the span stays. Returns
    (corrupted ids, labels): labels hold the original id at every position of every span and -100
    elsewhere. The input array is not modified."""
    ### BEGIN SOLUTION task 3
    input_ids = np.asarray(input_ids)
    out = input_ids.copy()
    labels = np.full_like(input_ids, -100)
    for start, length in spans:
        span = slice(start, start + length)
        labels[span] = input_ids[span]
        r = rng.random()                                         # one decision for the whole span
        if r < 0.8:
            out[span] = mask_id
        elif r < 0.9:
            out[span] = rng.integers(n_special, vocab_size, size=length)
    return out, labels
    ### END SOLUTION
