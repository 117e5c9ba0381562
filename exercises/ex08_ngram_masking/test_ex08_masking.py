"""Cases of exercise 8: the papers' probabilities, hard constraints on every draw, and statistics
over many draws from a seed held to binomial bounds (five standard deviations: a right answer
fails about once in a million seeds, a wrong distribution fails every time). The hidden cases'
seeds and random words are the grader's, drawn anew for every submission. The probes return the
raw draws; the judges count them here."""
import math

import numpy as np

from minishare.grader.cases import case, decode, encode


def as_text(spans):
    """One draw's spans as JSON text: how many spans a draw gives depends on how the submission
    uses its rng, so it is the judge's business, not part of the structure the grader compares
    with the reference's."""
    return encode(spans)


def within(count, n, p, sigmas=5):
    """|count − n p| within ``sigmas`` binomial standard errors."""
    return abs(count - n * p) <= sigmas * math.sqrt(n * p * (1 - p))


def words_of(maskable, word_start):
    """{first position: one past the last} of every word, as the task defines words."""
    starts = np.ones(len(maskable), dtype=bool) if word_start is None else np.asarray(word_start, dtype=bool)
    words, current = {}, None
    for i, ok in enumerate(np.asarray(maskable, dtype=bool)):
        if not ok:
            current = None
        elif starts[i] or current is None:
            current = i
            words[i] = i + 1
        else:
            words[current] = i + 1
    return words


def check_spans(spans, maskable, word_start, masked_lm_prob, max_n, exact):
    """Hard constraints on one draw; returns the number of words in each span."""
    words = words_of(maskable, word_start)
    budget = max(1, round(masked_lm_prob * int(np.sum(maskable))))
    for start, length in spans:             # before listing positions: a span of 10**15 would list without end
        assert 0 <= start and 1 <= length and start + length <= len(maskable), \
            f"span {(start, length)} does not lie inside the {len(maskable)} positions"
    covered = [p for start, length in spans for p in range(start, start + length)]
    assert len(covered) == len(set(covered)), f"spans overlap: {spans}"
    assert all(np.asarray(maskable)[covered]), f"a span covers an unmaskable position: {spans}"
    assert len(covered) <= budget, f"{len(covered)} tokens selected, more than the budget of {budget}"
    if exact:
        assert len(covered) == budget, f"{len(covered)} tokens selected, the budget is {budget}"
    counts = []
    for start, length in map(tuple, spans):
        assert start in words, f"span {(start, length)} does not start at a word"
        end, n = start, 0
        while end < start + length:
            assert end in words, f"span {(start, length)} splits a word"
            end, n = words[end], n + 1
        assert end == start + length, f"span {(start, length)} splits a word"
        assert 1 <= n <= max_n, f"span {(start, length)} holds {n} words (max_n = {max_n})"
        counts.append(n)
    for start, end in words.items():                   # no word left out that would still fit
        if start not in covered:
            assert len(covered) + end - start > budget, f"word {(start, end - start)} is free and fits the budget"
    return counts


def length_bounds(counts, n, kept=0.8):
    """Lengths where few spans are cut: 2 and 3 close to 3/11 and 2/11 (a cut only shortens, so
    at most those plus noise, and at least ``kept`` of them), 1 at least 6/11."""
    assert counts[0] >= n * 6 / 11 - 5 * math.sqrt(n * 6 / 11 * 5 / 11), (counts, n)
    assert n * 3 / 11 * kept <= counts[1] <= n * 3 / 11 + 5 * math.sqrt(n * 3 / 11 * 8 / 11), (counts, n)
    assert n * 2 / 11 * kept <= counts[2] <= n * 2 / 11 + 5 * math.sqrt(n * 2 / 11 * 9 / 11), (counts, n)


@case("ex08_task1")
def test_probabilities_of_the_papers(masking):
    """ALBERT's 6/11, 3/11, 2/11; SpanBERT's Geo(0.2) clipped at 10, mean span length 3.8."""
    return [masking.ngram_probabilities(3), masking.ngram_probabilities(1), masking.ngram_probabilities(10, p=0.2)]


@test_probabilities_of_the_papers.judge
def _(out, ref):
    np.testing.assert_allclose(out[0], [6 / 11, 3 / 11, 2 / 11], rtol=1e-12)
    np.testing.assert_allclose(out[1], [1.0])
    spanbert = 0.2 * 0.8 ** np.arange(10)
    np.testing.assert_allclose(out[2], spanbert / spanbert.sum(), rtol=1e-12)
    assert round(float(np.sum(out[2] * np.arange(1, 11))), 1) == 3.8


MASKABLE_60 = np.ones(60, dtype=bool)
MASKABLE_60[[0, 20, 21, 59]] = False                   # [CLS], a [SEP] pair, the last [SEP]


@case("ex08_task2")
def test_spans_respect_budget_and_boundaries(masking):
    """One-token words: exactly the budget, never [CLS] or [SEP], no overlap, 1 to 3 tokens."""
    rng = np.random.default_rng(0)
    return [as_text(masking.select_spans(MASKABLE_60, rng)) for _ in range(200)]


@test_spans_respect_budget_and_boundaries.judge
def _(out, ref):
    for text in out:
        check_spans(decode(text), MASKABLE_60, None, 0.15, 3, exact=True)


@case("ex08_task2")
def test_span_lengths_follow_p_n_where_nothing_cuts_them(masking):
    """On long sequences few spans are cut short, so lengths 2 and 3 appear at close to 3/11 and
    2/11 of the spans; a cut can only shorten, so length 1 is at least 6/11."""
    rng = np.random.default_rng(1)
    return [as_text([length for _, length in masking.select_spans(np.ones(2000, dtype=bool), rng)])
            for _ in range(60)]


@test_span_lengths_follow_p_n_where_nothing_cuts_them.judge
def _(out, ref):
    draws = [decode(text) for text in out]
    lengths = [n for draw in draws for n in draw]
    assert all(sum(draw) == 300 for draw in draws), [sum(draw) for draw in draws][:5]
    assert all(1 <= n <= 3 for n in lengths), sorted(set(lengths))
    length_bounds(np.bincount(lengths, minlength=4)[1:4], len(lengths))


# [CLS] w w- w w-- w w [SEP] w- w w-- w [SEP]: "-" marks a word of several pieces
MASKABLE_20 = np.ones(20, dtype=bool)
MASKABLE_20[[0, 10, 19]] = False
WORDS_20 = np.array([1, 1, 0, 1, 1, 0, 0, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1], dtype=bool)


@case("ex08_task2")
def test_spans_are_whole_words(masking):
    """Words of one to three pieces: spans start and end at word boundaries, stay within the
    budget (5 tokens here) and leave no free word that would still fit."""
    rng = np.random.default_rng(2)
    return [as_text(masking.select_spans(MASKABLE_20, rng, masked_lm_prob=0.3, word_start=WORDS_20))
            for _ in range(100)]


@test_spans_are_whole_words.judge
def _(out, ref):
    for text in out:
        check_spans(decode(text), MASKABLE_20, WORDS_20, 0.3, 3, exact=False)


SPANS_OF_2 = [(3 * i, 2) for i in range(10000)]       # 20,000 selected tokens, a gap after each span


@case("ex08_task3")
def test_corruption_decided_once_per_span(masking):
    """80% of the spans entirely [MASK], 10% random tokens, 10% unchanged: never a span in part."""
    rng = np.random.default_rng(3)
    ids = rng.integers(5, 100, size=30000)
    out, labels = masking.corrupt(ids, SPANS_OF_2, rng, vocab_size=100, mask_id=4, n_special=5)
    return {"ids": ids, "out": np.asarray(out), "labels": np.asarray(labels)}


@test_corruption_decided_once_per_span.judge
def _(out, ref):
    ids, corrupted, labels = out["ids"], out["out"], out["labels"]
    first, second = np.arange(0, 30000, 3), np.arange(1, 30000, 3)
    masked = (corrupted[first] == 4).astype(int) + (corrupted[second] == 4)
    assert (masked == 1).sum() == 0, f"{(masked == 1).sum()} spans are masked in part: decide once per span"
    n = len(first)
    assert within((masked == 2).sum(), n, 0.8), f"{(masked == 2).sum()} of {n} spans masked, expected 80%"
    changed = (masked == 0) & ((corrupted[first] != ids[first]) | (corrupted[second] != ids[second]))
    # a random token equals the original with probability 1/95: a random span looks kept with 1/95²
    assert within(changed.sum(), n, 0.1 * (1 - 1 / 95 ** 2)), f"{changed.sum()} of {n} spans random, expected 10%"
    gaps = np.arange(2, 30000, 3)
    assert (corrupted[gaps] == ids[gaps]).all() and (labels[gaps] == -100).all(), "a position outside the spans changed"
    selected = np.sort(np.concatenate([first, second]))
    assert (labels[selected] == ids[selected]).all(), "labels must hold the original ids at every span position"


### BEGIN HIDDEN TESTS
@case("ex08_task1")
def test_probabilities_sum_to_one_and_fall(masking):
    return {"albert": [masking.ngram_probabilities(n) for n in range(1, 8)],
            "geometric": [[p, n, masking.ngram_probabilities(n, p=p)] for p in (0.2, 0.5, 0.9, 1.0) for n in (1, 4, 10)]}


@test_probabilities_sum_to_one_and_fall.judge
def _(out, ref):
    for n, p in enumerate(out["albert"], start=1):
        weights = 1 / np.arange(1, n + 1)
        np.testing.assert_allclose(p, weights / weights.sum(), rtol=1e-12)
    for p, n, probabilities in out["geometric"]:
        weights = p * (1 - p) ** np.arange(n)
        np.testing.assert_allclose(probabilities, weights / weights.sum(), rtol=1e-12, atol=1e-15)
        assert len(probabilities) == n


def a_seed(rng):
    """A seed for the submission's own rng, drawn by the grader."""
    return int(rng.integers(2 ** 32))


@case("ex08_task2")
def test_same_seed_same_spans_and_at_least_one(masking, given):
    maskable = np.array([False, True, True, False])
    first, other = given["seeds"]
    return [as_text(masking.select_spans(maskable, np.random.default_rng(seed))) for seed in (first, first, other)]


@test_same_seed_same_spans_and_at_least_one.given
def _(rng):
    return {"seeds": [a_seed(rng), a_seed(rng)]}


@test_same_seed_same_spans_and_at_least_one.judge
def _(out, ref):
    assert out[0] == out[1], out
    spans = decode(out[2])
    assert sum(length for _, length in spans) == 1 and 1 <= spans[0][0] <= 2, spans


@case("ex08_task2")
def test_unigram_masking_when_max_n_is_one(masking, given):
    rng = np.random.default_rng(given["seed"])
    return [as_text(masking.select_spans(np.ones(100, dtype=bool), rng, max_n=1)) for _ in range(50)]


@test_unigram_masking_when_max_n_is_one.given
def _(rng):
    return {"seed": a_seed(rng)}


@test_unigram_masking_when_max_n_is_one.judge
def _(out, ref):
    for text in out:
        check_spans(decode(text), np.ones(100, dtype=bool), None, 0.15, 1, exact=True)


def two_piece_words(T):
    word_start = np.zeros(T, dtype=bool)
    word_start[::2] = True
    return word_start


@case("ex08_task2")
def test_span_lengths_in_words_follow_p_n(masking, given):
    """Words of two pieces: the number of *words* per span follows p(n) where nothing cuts (n
    counts words, not tokens)."""
    rng = np.random.default_rng(given["seed"])
    return [as_text(masking.select_spans(np.ones(2000, dtype=bool), rng, word_start=two_piece_words(2000)))
            for _ in range(60)]


@test_span_lengths_in_words_follow_p_n.given
def _(rng):
    return {"seed": a_seed(rng)}


@test_span_lengths_in_words_follow_p_n.judge
def _(out, ref):
    counts = [n for text in out
              for n in check_spans(decode(text), np.ones(2000, dtype=bool), two_piece_words(2000), 0.15, 3, exact=True)]
    # a budget of 150 two-piece words cuts more spans than one of 300 tokens: about 88% of the
    # 3-word spans survive (measured over 30 seeds: 83% to 94%)
    length_bounds(np.bincount(counts, minlength=4)[1:4], len(counts), kept=0.7)


@case("ex08_task2")
def test_mixed_words_keep_every_constraint(masking, given):
    """Words of several sizes and segments of several lengths, many draws: whole words, never past
    the budget, no free word left that would fit, at most max_n words, for max_n = 3 and 5."""
    rng = np.random.default_rng(given["seed"])
    return [as_text(masking.select_spans(words["maskable"], rng, max_n=max_n, word_start=words["word_start"]))
            for words in given["sequences"] for max_n in (3, 5)]


@test_mixed_words_keep_every_constraint.given
def _(rng):
    """40 sequences of 200 tokens, words of 1 to 4 pieces, [SEP]s at random: what a real
    tokenizer gives."""
    return {"seed": a_seed(rng),
            "sequences": [{"maskable": rng.random(200) > 0.08, "word_start": rng.random(200) < 0.45}
                          for _ in range(40)]}


@test_mixed_words_keep_every_constraint.judge
def _(out, ref, given):
    asked = [(words, max_n) for words in given["sequences"] for max_n in (3, 5)]
    for text, (words, max_n) in zip(out, asked):
        check_spans(decode(text), words["maskable"], words["word_start"], 0.15, max_n, exact=False)


@case("ex08_task3")
def test_random_tokens_are_uniform_independent_ordinary_tokens(masking, given):
    """Spans of 4 tokens, all 7, ordinary tokens 5..11: the random spans draw each token on its
    own (all four equal in about 1 span of 400), uniformly over the ordinary tokens; the input
    is not modified."""
    rng = np.random.default_rng(given["seed"])
    ids = np.full(40000, 7)
    original = ids.copy()
    spans = [(4 * i, 4) for i in range(10000)]
    out, labels = masking.corrupt(ids, spans, rng, vocab_size=12, mask_id=3, n_special=5)
    return {"input untouched": bool((ids == original).all()), "out": np.asarray(out), "labels": np.asarray(labels)}


@test_random_tokens_are_uniform_independent_ordinary_tokens.given
def _(rng):
    return {"seed": a_seed(rng)}


@test_random_tokens_are_uniform_independent_ordinary_tokens.judge
def _(out, ref):
    assert out["input untouched"] is True, "corrupt modified its input"
    assert (out["labels"] == 7).all(), "labels must hold the original id at every span position"
    spans = out["out"].reshape(10000, 4)
    partial = ((spans == 3).any(axis=1) & ~(spans == 3).all(axis=1)).sum()
    assert partial == 0, f"{partial} spans masked in part"
    random = spans[~(spans == 3).any(axis=1) & (spans != 7).any(axis=1)]
    assert within(len(random), 10000, 0.1 * (1 - (1 / 7) ** 4)), f"{len(random)} random spans of 10,000"
    assert random.min() >= 5 and random.max() <= 11, "a random token is special or outside the vocabulary"
    all_equal = (random == random[:, :1]).all(axis=1).sum()
    assert all_equal <= len(random) * 0.05, f"{all_equal} of {len(random)} random spans repeat one token: draw each token"
    tokens = random.ravel()
    for token in range(5, 12):
        assert within((tokens == token).sum(), len(tokens), 1 / 7), (token, (tokens == token).sum(), len(tokens))


@case("ex08_task3")
def test_spans_of_one_token_and_uneven_lengths(masking, given):
    """Spans of lengths 1 to 5 at random places: the 80/10/10 split is over spans, whatever their
    length (a span is one decision)."""
    out, labels = masking.corrupt(given["ids"], given["spans"], np.random.default_rng(given["seed"]),
                                  vocab_size=1000, mask_id=4, n_special=5)
    return {"out": np.asarray(out), "labels": np.asarray(labels)}


@test_spans_of_one_token_and_uneven_lengths.given
def _(rng):
    spans, start = [], 0
    while start < 59990:
        length = int(rng.integers(1, 6))
        spans.append((start, length))
        start += length + int(rng.integers(1, 3))
    return {"seed": a_seed(rng), "ids": rng.integers(5, 1000, size=60000), "spans": spans}


@test_spans_of_one_token_and_uneven_lengths.judge
def _(out, ref, given):
    ids, spans, corrupted, labels = given["ids"], given["spans"], out["out"], out["labels"]
    kinds = {"mask": 0, "random": 0, "kept": 0}
    inside = np.zeros(len(ids), dtype=bool)
    for start, length in spans:
        span = slice(start, start + length)
        inside[span] = True
        masked = corrupted[span] == 4
        assert masked.all() or not masked.any(), f"span {(start, length)} is masked in part"
        kinds["mask" if masked.all() else "random" if (corrupted[span] != ids[span]).any() else "kept"] += 1
    n = len(spans)
    assert within(kinds["mask"], n, 0.8) and within(kinds["random"] + kinds["kept"], n, 0.2), kinds
    assert within(kinds["random"], n, 0.1, sigmas=6), kinds
    assert (labels[inside] == ids[inside]).all() and (labels[~inside] == -100).all()
    assert (corrupted[~inside] == ids[~inside]).all()
### END HIDDEN TESTS
