"""Tests of exercise 9 on a synthetic corpus whose every word is unique (so a segment can be found
in its document) and whose sentences start with a capital token and end with a period token (the
cues a leak would use). Cue-only rules must score at chance: within five binomial standard
deviations of 50%."""
import math

import numpy as np
import pytest

from sop import cue_accuracy, sop_pairs, truncate_segment

PERIOD, CAPITALS = 1, range(10, 60)


def corpus(seed, n_documents=400):
    rng, counter, documents = np.random.default_rng(seed), 1000, []
    for _ in range(n_documents):
        document = []
        for _ in range(int(rng.integers(2, 10))):
            n_words = int(rng.integers(2, 18))
            document.append([int(rng.choice(CAPITALS))] + list(range(counter, counter + n_words)) + [PERIOD])
            counter += n_words
        documents.append(document)
    return documents


def locate(segment, stream, position):
    """Start of ``segment`` in the token stream (found by its first word), checked contiguous."""
    offset, word = next((j, t) for j, t in enumerate(segment) if t >= 1000)
    start = position[word] - offset
    assert stream[start:start + len(segment)] == list(segment), "a segment is not contiguous text"
    return start


def chance(accuracy, n):
    return accuracy <= 0.5 + 5 * 0.5 / math.sqrt(n)


CUES = {
    "first ends a sentence": lambda f, s: f[-1] == PERIOD,
    "second ends a sentence": lambda f, s: s[-1] == PERIOD,
    "first starts a sentence": lambda f, s: f[0] in CAPITALS,
    "second starts a sentence": lambda f, s: s[0] in CAPITALS,
    "first is longer": lambda f, s: len(f) > len(s),
}


@pytest.mark.ex09_task1
def test_truncation_fits_keeps_contiguous_text_and_cuts_both_ends():
    rng = np.random.default_rng(0)
    fronts = backs = 0
    for _ in range(300):
        kept = truncate_segment(list(range(30)), 18, rng)
        assert len(kept) == 18 and kept == list(range(kept[0], kept[0] + 18))   # contiguous
        fronts += kept[0] > 0
        backs += kept[-1] < 29
    assert fronts > 250 and backs > 250                           # 12 cuts: both ends almost always


@pytest.mark.ex09_task2
def test_pairs_are_consecutive_segments_in_or_against_order():
    documents = corpus(1, 150)
    stream = [t for d in documents for s in d for t in s]
    position = {t: i for i, t in enumerate(stream) if t >= 1000}
    pairs = sop_pairs(documents, np.random.default_rng(2), max_num_tokens=40)
    assert len(pairs) == sum(len(d) - 1 for d in documents)      # one per sentence boundary
    for first, second, label in pairs:
        assert first and second and len(first) <= 20 and len(second) <= 20
        f, s = locate(first, stream, position), locate(second, stream, position)
        if label == 0:
            assert f + len(first) <= s, "label 0 must keep the text's order"
        else:
            assert s + len(second) <= f, "label 1 must be the swapped pair"
    labels = [label for _, _, label in pairs]
    assert chance(max(np.mean(labels), 1 - np.mean(labels)), len(labels))


@pytest.mark.ex09_task3
def test_cue_accuracy_hand_worked():
    pairs = [([1], [2, 2], 1), ([1, 1], [2], 0), ([1], [2], 0), ([1, 1, 1], [2], 1)]
    assert cue_accuracy(pairs, lambda f, s: len(f) < len(s)) == 0.75
    assert cue_accuracy(pairs, lambda f, s: len(f) >= len(s)) == 0.75
    assert cue_accuracy(pairs, lambda f, s: True) == 0.5


@pytest.mark.ex09_task3
def test_no_cue_gives_the_label_away():
    # half budget 12 < most sentences: nearly every segment is cut, so a cut that depends on the
    # segment's role would show (cutting A at its front and B at its back scores 72% here)
    pairs = sop_pairs(corpus(3, 800), np.random.default_rng(4), max_num_tokens=24)
    assert len(pairs) > 3000
    for name, cue in CUES.items():
        assert chance(cue_accuracy(pairs, cue), len(pairs)), name


### BEGIN HIDDEN TESTS
@pytest.mark.ex09_task1
def test_truncation_leaves_short_segments_alone_and_copies():
    tokens = [1, 2, 3]
    kept = truncate_segment(tokens, 5, np.random.default_rng(5))
    assert kept == [1, 2, 3]
    kept.append(9)
    assert tokens == [1, 2, 3]


@pytest.mark.ex09_task2
def test_documents_of_one_sentence_give_no_pair_and_seed_repeats_and_mirror():
    assert sop_pairs([[[10, 1000, 1]]], np.random.default_rng(6), 40) == []
    documents = corpus(7, 30)
    assert sop_pairs(documents, np.random.default_rng(8), 25) == sop_pairs(documents, np.random.default_rng(8), 25)
    # three sentences of 5 tokens, half budget 10: A and B take two sentences each where they exist
    a1, b1, c1 = [10, 1001, 1002, 1003, 1], [11, 1004, 1005, 1006, 1], [12, 1007, 1008, 1009, 1]
    pairs = sop_pairs([[a1, b1, c1]], np.random.default_rng(9), 20)
    in_order = sorted((p[1], p[0]) if p[2] else (p[0], p[1]) for p in pairs)
    assert in_order == sorted([(a1, b1 + c1), (a1 + b1, c1)])


@pytest.mark.ex09_task3
def test_no_combination_of_boundary_cues_predicts_the_label():
    """A lookup table over the four boundary cues, fitted on half of the pairs, scored on the other."""
    pairs = sop_pairs(corpus(9, 800), np.random.default_rng(10), max_num_tokens=16)
    keys = [tuple(bool(c(f, s)) for c in list(CUES.values())[:4]) for f, s, _ in pairs]
    labels = [label for _, _, label in pairs]
    fit = {}
    for key, label in zip(keys[::2], labels[::2]):
        fit.setdefault(key, []).append(label)
    rule = {key: np.mean(v) > 0.5 for key, v in fit.items()}
    test = list(zip(keys[1::2], labels[1::2]))
    accuracy = np.mean([rule.get(key, False) == bool(label) for key, label in test])
    assert chance(max(accuracy, 1 - accuracy), len(test))
### END HIDDEN TESTS
