"""ALBERT pre-training examples: masking statistics against the paper's rates, span lengths against
p(n), SOP / NSP structure read back from marked sentences, and reproducible batches."""
import re

import numpy as np
import pytest

from minishare.data.corpus import default_corpus
from minishare.data.pretraining import (IGNORE_INDEX, PretrainingData, collate,
                                        ngram_probabilities, select_spans, split_documents,
                                        truncate_pair)
from minishare.data.tokenizer import SPECIAL_TOKENS, Tokenizer

N_SPECIAL = len(SPECIAL_TOKENS)


@pytest.fixture(scope="module")
def corpus():
    return default_corpus()


@pytest.fixture(scope="module")
def tokenizer(corpus):
    return Tokenizer.train([sentence for document in corpus for sentence in document], 2000)


def marked_corpus(n_documents=100, seed=0):
    """Documents whose sentences say where they come from: "d12s3" is sentence 3 of document 12,
    written at both ends of the sentence so that a truncated segment still shows it."""
    rng = np.random.default_rng(seed)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    return [[f"d{d}s{s} " + " ".join(rng.choice(words, size=rng.integers(2, 9))) + f" d{d}s{s}."
             for s in range(int(rng.integers(3, 10)))]
            for d in range(n_documents)]


def originals(example):
    """The example's ids before masking: labels hold the original id wherever one was selected."""
    return np.where(example["labels"] != IGNORE_INDEX, example["labels"], example["input_ids"])


def parts(example):
    """The token ids of the first and the second segment, as they sit in the input."""
    ids, types = originals(example), example["token_type_ids"]
    return ids[1:np.sum(types == 0) - 1], ids[np.sum(types == 0):-1]


def marks(tokenizer, ids):
    """(document, sentence) marks in the text of ``ids``, consecutive repeats merged."""
    found = [tuple(map(int, m)) for m in re.findall(r"\bd(\d+)s(\d+)\b", tokenizer.decode(ids))]
    return [m for i, m in enumerate(found) if i == 0 or m != found[i - 1]]


def in_order(found):
    """One document, consecutive sentences in increasing order."""
    return (len({d for d, _ in found}) == 1
            and all(b[1] == a[1] + 1 for a, b in zip(found, found[1:])))


def precedes(first, second):
    """Each in order, and ``first`` comes before ``second`` in the same document. Sentences between
    them may be missing: truncation may take whole sentences from A's back or B's front."""
    return (in_order(first) and in_order(second) and first[0][0] == second[0][0]
            and first[-1][1] < second[0][1])


# ---------------------------------------------------------------- masking

@pytest.mark.parametrize("max_ngram", [1, 3])
def test_masking_rates_follow_bert(corpus, tokenizer, max_ngram):
    train, _ = split_documents(corpus)
    data = PretrainingData(train, tokenizer, max_seq_length=64, max_ngram=max_ngram)
    examples = data.examples(seed=0) + data.examples(seed=1)
    n_maskable = n_selected = n_mask = n_same = n_random = 0
    for example in examples:
        ids, labels, masked = originals(example), example["labels"], example["input_ids"]
        selected = labels != IGNORE_INDEX
        assert selected.sum() >= 1                                  # at least one per example
        assert np.all(ids[~selected] == masked[~selected])          # the rest is untouched
        assert np.all(labels[selected] >= N_SPECIAL)                # never a special token
        assert np.all(masked[selected] != tokenizer.pad_id)
        n_maskable += np.sum(ids >= N_SPECIAL)
        n_selected += selected.sum()
        n_mask += np.sum(masked[selected] == tokenizer.mask_id)
        n_same += np.sum(masked[selected] == labels[selected])
        replaced = selected & (masked != tokenizer.mask_id) & (masked != labels)
        assert np.all(masked[replaced] >= N_SPECIAL)                # random tokens: not special
        n_random += replaced.sum()
    assert n_selected > 5000
    assert abs(n_selected / n_maskable - 0.15) < 0.005
    assert abs(n_mask / n_selected - 0.8) < 0.02
    assert abs(n_random / n_selected - 0.1) < 0.015
    assert abs(n_same / n_selected - 0.1) < 0.015


def test_short_examples_still_mask_one_token(tokenizer):
    data = PretrainingData([["One two.", "Three four."]] * 3, tokenizer, max_seq_length=8)
    for example in data.examples(seed=0):
        assert np.sum(example["labels"] != IGNORE_INDEX) >= 1
        assert len(example["input_ids"]) <= 8


def test_pairs_of_unknown_characters_only_are_skipped():
    tokenizer = Tokenizer.train(["ab"], vocab_size=10)
    documents = [["Δ δ", "Λ λ"]] * 4 + [["ab", "ba"]]
    examples = PretrainingData(documents, tokenizer, max_seq_length=16).examples(seed=0)
    assert len(examples) == 1   # from the last document; the others are [UNK] only


def test_ngram_probabilities_are_albert_s():
    assert np.allclose(ngram_probabilities(3), [6 / 11, 3 / 11, 2 / 11])
    assert np.allclose(ngram_probabilities(1), [1.0])


def test_span_lengths_follow_p_n_before_trimming():
    # Later spans of an example are trimmed by the budget and by earlier spans, which favours short
    # spans. The first span of a long run of maskable tokens is trimmed by neither, so its length
    # is the drawn n: measure p(n) there.
    rng = np.random.default_rng(0)
    maskable = np.ones(1000, dtype=bool)
    first = np.array([select_spans(maskable, rng, max_ngram=3)[0][1] for _ in range(4000)])
    frequencies = np.bincount(first, minlength=4)[1:] / len(first)
    assert np.allclose(frequencies, [6 / 11, 3 / 11, 2 / 11], atol=0.025)


def test_spans_stay_on_maskable_positions_within_budget():
    rng = np.random.default_rng(1)
    for _ in range(300):
        maskable = rng.random(int(rng.integers(1, 80))) < 0.8
        if not maskable.any():
            continue
        spans = select_spans(maskable, rng, max_ngram=3)
        positions = [p for start, length in spans for p in range(start, start + length)]
        assert len(positions) == len(set(positions)) == max(1, round(0.15 * maskable.sum()))
        assert all(maskable[p] for p in positions)   # a span never crosses [CLS] / [SEP]
        assert all(1 <= length <= 3 for _, length in spans)


# ---------------------------------------------------------------- SOP and NSP

def test_truncation_cuts_the_longer_segment_at_a_random_end():
    # A has 10 tokens, B 4, room for 8: six tokens leave A, each from its front with probability
    # 1/2, so the number taken from the front is Binomial(6, 1/2): C(6, k) / 64.
    rng = np.random.default_rng(0)
    fronts = []
    for _ in range(4000):
        a, b = truncate_pair(range(10), range(100, 104), 8, rng)
        assert b == [100, 101, 102, 103] and len(a) == 4 and a == list(range(a[0], a[0] + 4))
        fronts.append(a[0])
    expected = np.array([1, 6, 15, 20, 15, 6, 1]) / 64
    assert np.allclose(np.bincount(fronts, minlength=7) / len(fronts), expected, atol=0.025)
    a, b = truncate_pair([1, 2], [3, 4], 3, rng)   # a tie: B loses the token
    assert a == [1, 2] and len(b) == 1
    a, b = truncate_pair([1, 2, 3], [4], 2, rng)   # A stays the longer until 1 against 1
    assert len(a) == 1 and b == [4]


def test_sop_pairs_are_the_same_segments_in_either_order():
    documents = marked_corpus()
    tokenizer = Tokenizer.train([" ".join(document) for document in documents], 300)
    data = PretrainingData(documents, tokenizer, max_seq_length=40, task="sop")
    examples = data.examples(seed=0) + data.examples(seed=1) + data.examples(seed=2)
    labels = [example["sentence_order_label"] for example in examples]
    assert abs(np.mean(labels) - 0.5) < 0.08 and len(labels) > 300
    for example in examples:
        first, second = (marks(tokenizer, part) for part in parts(example))
        assert first and second
        if example["sentence_order_label"] == 0:
            assert precedes(first, second)
        else:   # swapped: the second segment is the one that came first in the document
            assert precedes(second, first) and not precedes(first, second)


def test_nsp_negatives_take_segment_b_from_another_document():
    documents = marked_corpus()
    tokenizer = Tokenizer.train([" ".join(document) for document in documents], 300)
    data = PretrainingData(documents, tokenizer, max_seq_length=40, task="nsp")
    examples = data.examples(seed=0) + data.examples(seed=1) + data.examples(seed=2)
    labels = [example["next_sentence_label"] for example in examples]
    assert abs(np.mean(labels) - 0.5) < 0.08 and len(labels) > 300
    for example in examples:
        a, b = (marks(tokenizer, part) for part in parts(example))
        assert in_order(a) and in_order(b)
        if example["next_sentence_label"] == 0:
            assert precedes(a, b)
        else:
            assert a[0][0] != b[0][0]


def test_sop_label_balance_on_the_default_corpus(corpus, tokenizer):
    data = PretrainingData(corpus, tokenizer, max_seq_length=128, task="sop")
    labels = [example["sentence_order_label"] for example in data.examples(seed=5)]
    assert abs(np.mean(labels) - 0.5) < 4 * 0.5 / np.sqrt(len(labels))


def test_inputs_read_cls_a_sep_b_sep(corpus, tokenizer):
    data = PretrainingData(corpus[:40], tokenizer, max_seq_length=48)
    for example in data.examples(seed=0):
        ids, types = originals(example), example["token_type_ids"]
        n_a = np.sum(types == 0)
        assert len(ids) <= 48 and types.tolist() == [0] * n_a + [1] * (len(ids) - n_a)
        assert ids[0] == tokenizer.cls_id and ids[n_a - 1] == ids[-1] == tokenizer.sep_id
        assert np.all(ids[1:n_a - 1] >= N_SPECIAL) and np.all(ids[n_a:-1] >= N_SPECIAL)
        assert n_a >= 3 and len(ids) - n_a >= 2   # neither segment is empty


# ---------------------------------------------------------------- batches and splits

def test_batches_are_reproducible_and_padded(corpus, tokenizer):
    train, _ = split_documents(corpus)
    data = PretrainingData(train, tokenizer, max_seq_length=64)
    first, again = list(data.batches(16, seed=7)), list(data.batches(16, seed=7))
    other = next(data.batches(16, seed=8))
    assert len(first) == len(again) > 10
    for batch, same in zip(first, again):
        assert batch.keys() == same.keys() == {"input_ids", "attention_mask", "token_type_ids",
                                               "labels", "sentence_order_label"}
        for key in batch:
            assert batch[key].dtype == np.int64 and np.array_equal(batch[key], same[key])
    assert not np.array_equal(first[0]["input_ids"][:, :10], other["input_ids"][:, :10])
    batch = first[0]
    real = batch["attention_mask"] == 1
    assert batch["input_ids"].shape == batch["labels"].shape == (16, real.sum(axis=1).max())
    assert np.all(real[:, :-1] >= real[:, 1:])   # real tokens first, then padding
    assert np.all(batch["input_ids"][~real] == 0) and np.all(batch["labels"][~real] == -100)
    assert np.all(batch["token_type_ids"][~real] == 0)
    assert batch["sentence_order_label"].shape == (16,)


def test_collate_pads_to_a_fixed_length():
    example = {"input_ids": np.array([2, 9, 3, 8, 3]), "token_type_ids": np.array([0, 0, 0, 1, 1]),
               "labels": np.array([-100, 9, -100, -100, -100]), "next_sentence_label": 1}
    batch = collate([example], "next_sentence_label", pad_to=7)
    assert batch["input_ids"].tolist() == [[2, 9, 3, 8, 3, 0, 0]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1, 1, 1, 0, 0]]
    assert batch["labels"].tolist() == [[-100, 9, -100, -100, -100, -100, -100]]
    assert batch["next_sentence_label"].tolist() == [1]
    with pytest.raises(ValueError, match="pad_to=4"):
        collate([example], "next_sentence_label", pad_to=4)


def test_split_documents_is_deterministic_and_shares_no_sentence(corpus):
    train, evaluation = split_documents(corpus, eval_fraction=0.1, seed=0)
    assert (train, evaluation) == split_documents(corpus, eval_fraction=0.1, seed=0)
    assert evaluation != split_documents(corpus, eval_fraction=0.1, seed=1)[1]
    # round(0.1 n) documents are picked by a seeded permutation; a picked one is held out unless
    # it shares a sentence with training (the embedded corpus repeats some sections)
    picked = np.random.default_rng(0).permutation(len(corpus))[:round(0.1 * len(corpus))].tolist()
    assert train == [doc for i, doc in enumerate(corpus) if i not in picked]
    seen = {sentence for doc in train for sentence in doc}
    assert evaluation == [doc for i, doc in enumerate(corpus) if i in picked and not seen & set(doc)]
    assert 0.5 * len(picked) <= len(evaluation) < len(picked)


def test_split_documents_drops_a_held_out_document_that_shares_a_sentence():
    # one sentence in two pages: whichever page is held out, training has the other
    corpus = [["A sentence in two pages.", "One."], ["Another page."], ["A third page."],
              ["Two.", "A sentence in two pages."]]
    for seed in range(20):
        train, evaluation = split_documents(corpus, eval_fraction=0.5, seed=seed)
        assert len(train) == 2
        seen = {sentence for doc in train for sentence in doc}
        assert all(seen.isdisjoint(doc) for doc in evaluation)
    with pytest.raises(ValueError, match="repeats itself"):
        split_documents([["Same.", "One."], ["Two.", "Same."]], eval_fraction=0.5)


def test_bad_settings_are_refused(tokenizer):
    documents = [["One sentence here.", "Another one here."]]
    with pytest.raises(ValueError, match="task"):
        PretrainingData(documents, tokenizer, task="mlm")
    with pytest.raises(ValueError, match="max_seq_length"):
        PretrainingData(documents, tokenizer, max_seq_length=4)
    with pytest.raises(ValueError, match="another document"):
        PretrainingData(documents, tokenizer, task="nsp")
    with pytest.raises(ValueError, match="two sentences"):
        PretrainingData([["Only one."]], tokenizer)
