"""Tests of exercise 8: the paper's probabilities, hard constraints on every draw, and statistics
over many draws held to binomial bounds (five standard deviations: a right answer fails about
once in a million runs, a wrong distribution fails every time)."""
import math

import numpy as np
import pytest

from masking import corrupt, ngram_probabilities, select_spans


def within(count, n, p, sigmas=5):
    return abs(count - n * p) <= sigmas * math.sqrt(n * p * (1 - p))


@pytest.mark.ex08_task1
def test_probabilities_of_the_paper():
    np.testing.assert_allclose(ngram_probabilities(3), [6 / 11, 3 / 11, 2 / 11], rtol=1e-12)
    np.testing.assert_allclose(ngram_probabilities(1), [1.0])


@pytest.mark.ex08_task2
def test_spans_respect_budget_and_boundaries():
    rng = np.random.default_rng(0)
    maskable = np.ones(60, dtype=bool)
    maskable[[0, 20, 21, 59]] = False                  # [CLS], a [SEP] pair, the last [SEP]
    for _ in range(200):
        spans = select_spans(maskable, rng)
        covered = [p for start, length in spans for p in range(start, start + length)]
        assert len(covered) == len(set(covered)) == round(0.15 * 56)
        assert maskable[covered].all()
        assert all(1 <= length <= 3 for _, length in spans)


@pytest.mark.ex08_task2
def test_span_lengths_follow_p_n_where_nothing_cuts_them():
    """On long sequences few spans are cut short, so lengths 2 and 3 appear at close to 3/11 and
    2/11 of the spans; a cut can only shorten, so length 1 is at least 6/11."""
    rng = np.random.default_rng(1)
    lengths = [length for _ in range(60) for _, length in select_spans(np.ones(2000, dtype=bool), rng)]
    n = len(lengths)
    counts = np.bincount(lengths, minlength=4)[1:]
    assert counts[0] >= n * 6 / 11 - 5 * math.sqrt(n * 6 / 11 * 5 / 11)
    assert n * 3 / 11 * 0.8 <= counts[1] <= n * 3 / 11 + 5 * math.sqrt(n * 3 / 11 * 8 / 11)
    assert n * 2 / 11 * 0.8 <= counts[2] <= n * 2 / 11 + 5 * math.sqrt(n * 2 / 11 * 9 / 11)


@pytest.mark.ex08_task3
def test_corruption_rates_80_10_10():
    rng = np.random.default_rng(2)
    ids = rng.integers(5, 100, size=20000)
    positions = np.arange(0, 20000, 2)                 # 10,000 selected
    out, labels = corrupt(ids, positions, rng, vocab_size=100, mask_id=4, n_special=5)
    n = len(positions)
    masked = (out[positions] == 4).sum()
    changed = ((out[positions] != ids[positions]) & (out[positions] != 4)).sum()
    assert within(masked, n, 0.8)
    # a random token equals the original with probability 1/95, so "changed" is 0.1 · 94/95
    assert within(changed, n, 0.1 * 94 / 95)
    assert (out[1::2] == ids[1::2]).all()
    assert (labels[positions] == ids[positions]).all() and (labels[1::2] == -100).all()


### BEGIN HIDDEN TESTS
@pytest.mark.ex08_task1
def test_probabilities_sum_to_one_and_fall():
    for n in range(1, 8):
        p = ngram_probabilities(n)
        assert len(p) == n and abs(p.sum() - 1) < 1e-12 and (np.diff(p) < 0).all()


@pytest.mark.ex08_task2
def test_same_seed_same_spans_and_at_least_one():
    maskable = np.array([False, True, True, False])
    assert select_spans(maskable, np.random.default_rng(3)) == select_spans(maskable, np.random.default_rng(3))
    spans = select_spans(maskable, np.random.default_rng(4))
    assert sum(length for _, length in spans) == 1


@pytest.mark.ex08_task2
def test_unigram_masking_when_max_n_is_one():
    rng = np.random.default_rng(5)
    assert all(length == 1 for _ in range(50) for _, length in select_spans(np.ones(100, dtype=bool), rng, max_n=1))


@pytest.mark.ex08_task3
def test_random_tokens_are_uniform_ordinary_tokens_and_input_untouched():
    rng = np.random.default_rng(6)
    ids = np.full(30000, 7)
    original = ids.copy()
    out, _ = corrupt(ids, np.arange(30000), rng, vocab_size=12, mask_id=3, n_special=5)
    assert (ids == original).all()
    replaced = out[(out != 3) & (out != 7)]
    assert replaced.min() >= 5 and replaced.max() <= 11
    for token in (5, 6, 8, 9, 10, 11):
        assert within((replaced == token).sum(), len(replaced), 1 / 6)
### END HIDDEN TESTS
