"""Held-out data is never trained on: for every corpus and task, the items of the held-out set (a
sentence, a problem, a forest) are counted in what training draws, and the count must be zero.
Items are compared as this file writes them down (the text of a sentence, the symbols of a source,
the set of a forest's pointers), not through the library's own hash keys."""
import numpy as np
import pytest

from minishare import data
from minishare.data import forest as forests, holdout, seq2seq
from minishare.errors import InvalidValue
from minishare.run.build import GRAMMARS, corpus_documents
from minishare.tasks import PointerForestTask, RoutedForestTask, Seq2SeqTask

TRAINING_BATCHES = 500   # of 32 problems; before the split, 2,000 of them held half of addition's 256


def sentence_overlap(train, held_out):
    """(held-out sentences that some training document holds too, held-out sentences)."""
    seen = {sentence for document in train for sentence in document}
    sentences = [sentence for document in held_out for sentence in document]
    return sum(sentence in seen for sentence in sentences), len(sentences)


@pytest.mark.parametrize("corpus", [*GRAMMARS, "default"])
def test_no_held_out_sentence_is_in_training(corpus):
    documents = corpus_documents(corpus)
    train, held_out = data.split_documents(documents, eval_fraction=0.1, seed=0)   # as every run splits
    shared, n = sentence_overlap(train, held_out)
    assert n > 0 and shared == 0, f"{corpus}: {shared} of {n} held-out sentences are in training"
    if corpus in GRAMMARS:   # written that way: every story the split picks stays held out
        assert len(held_out) == len(holdout.held_out_documents(len(documents))) == 200


def test_split_drops_what_a_corpus_not_written_on_the_partition_repeats():
    # Stories drawn for 10% held out, split at 25%: the extra stories were written from training
    # sentences, so those sharing one with training are dropped, and the rest leak nothing.
    documents = data.grammar_corpus(200, seed=4)
    train, held_out = data.split_documents(documents, eval_fraction=0.25, seed=0)
    assert sentence_overlap(train, held_out)[0] == 0
    assert 20 <= len(held_out) < 50 and len(train) == 150


def written(task, pairs):
    """(source, target) id pairs as this test names a problem: a pointer task's pairs as a set
    (their order is presentation, not problem), every other task's source as it reads."""
    problems = []
    for source, _ in pairs:
        symbols = [task.vocab[i] for i in source]
        problems.append((frozenset(symbols[:-1]), symbols[-1]) if task.name == "pointer" else " ".join(symbols))
    return problems


@pytest.mark.parametrize("name", sorted(seq2seq.TASKS))
def test_no_held_out_problem_is_trained_on(name):
    task = Seq2SeqTask(name, batch_size=32, seed=3)
    held_out = set(written(task.task, task.eval_pairs))
    trained = set()
    for index in range(TRAINING_BATCHES):
        batch = task.batch(index)
        trained.update(written(task.task, [(row[row != seq2seq.PAD_ID], None) for row in batch["src"]]))
    overlap = held_out & trained
    assert len(held_out) > 10 and not overlap, f"{name}: {len(overlap)} of {len(held_out)} held-out problems trained on"


def test_the_held_out_problems_are_the_generators_own():
    # The same distribution: sums as long on both sides (the hash picks without looking).
    task = seq2seq.get_task("addition")
    lengths = {side: np.mean([len(source) for source, _ in seq2seq.examples(task, 2000, seed=1, held_out=side)])
               for side in (False, True)}
    assert abs(lengths[True] - lengths[False]) < 0.2, lengths


def forest_set(ids):
    return frozenset(map(tuple, ids.tolist()))


@pytest.mark.parametrize("options, depths", [(dict(n_symbols=12, n_chains=2), (1, 2)),
                                             (dict(n_symbols=32, n_chains=4), (1, 2, 3, 4))])
def test_no_held_out_forest_is_trained_on(options, depths):
    forest = forests.PointerForest(**options)
    for task in (PointerForestTask(forest, depths, batch_size=32, seed=0, n_eval=128),
                 RoutedForestTask(forest, depths[-1:], batch_size=32, seed=1, n_eval=128)):
        held_out = {forest_set(ids) for ids in task.eval_batch["input_ids"]}
        trained = {forest_set(ids) for index in range(200) for ids in task.batch(index)["input_ids"]}
        assert len(held_out) > 10 and not held_out & trained, options


def test_held_out_is_a_tenth_and_a_space_too_small_is_refused():
    assert abs(np.mean([holdout.is_held_out(i) for i in range(20_000)]) - 0.1) < 0.01
    assert holdout.is_held_out("some sentence.") == holdout.is_held_out("some sentence.")
    one = seq2seq.CopyTask(max_length=1, n_symbols=1)   # a single problem: one side is empty
    side = holdout.is_held_out(("a",))
    assert seq2seq.examples(one, 1, seed=0, held_out=side)
    with pytest.raises(InvalidValue, match="too small"):
        seq2seq.examples(one, 1, seed=0, held_out=not side)
