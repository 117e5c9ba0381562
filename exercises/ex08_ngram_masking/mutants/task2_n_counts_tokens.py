"""Counts n in tokens, not words: a span grows by whole words while it holds fewer than n
tokens, so words of several pieces make spans of fewer words than p(n) says."""
import numpy as np


def select_spans(maskable, rng, masked_lm_prob=0.15, max_n=3, word_start=None):
    maskable = np.asarray(maskable, dtype=bool)
    T = len(maskable)
    word_start = np.ones(T, dtype=bool) if word_start is None else np.asarray(word_start, dtype=bool)
    begins = maskable & (word_start | np.concatenate([[True], ~maskable[:-1]]))
    ends, following = np.empty(T, dtype=np.int64), T
    for i in range(T - 1, -1, -1):
        ends[i] = following
        if begins[i] or not maskable[i]:
            following = i
    budget = max(1, round(masked_lm_prob * int(maskable.sum())))
    words = rng.permutation(np.flatnonzero(begins))
    lengths = rng.choice(np.arange(1, max_n + 1), size=len(words), p=ngram_probabilities(max_n))   # noqa: F821
    free, spans, selected = maskable.copy(), [], 0
    for start, n in zip(words.tolist(), lengths.tolist()):
        if selected == budget:
            break
        if not free[start]:
            continue
        end, taken = start, 0
        while end - start < n and end < T and begins[end] and free[end] and selected + ends[end] - start <= budget:
            end, taken = int(ends[end]), taken + 1
        if taken == 0:
            continue
        free[start:end] = False
        spans.append((start, end - start))
        selected += end - start
    return spans
