"""Cue-only baselines (minishare.analysis.cues): the fitted rules on hand-made pairs whose answer is
known, the SOP / NSP examples of the default corpus, whose label no surface cue may tell, and those
of the grammar corpus the reproduction pre-trains on: no cue-only rule above 0.60 on SOP, the order
readable from the events, and a topic signal for NSP."""
import re

import numpy as np
import pytest

from minishare.analysis.cues import CONTENT_CUES, CUES, cue_accuracies, fit_rule, naive_bayes, pairs
from minishare.data import EVENTS, PretrainingData, Tokenizer, collate, default_corpus, split_documents
from minishare.run.build import corpus_documents, load_tokenizer

TOLERANCE = 0.05   # the largest distance from chance a cue-only rule may score


def test_fit_rule_takes_the_majority_per_value():
    values = ["x", "x", "x", "y", "y", "y", "z", "z"]
    labels = [1, 1, 0, 0, 0, 1, 1, 0]   # x -> 1 (2:1), y -> 0 (2:1), z a tie: the default
    table, default = fit_rule(values, labels)
    assert default == 0                # four 0s against four 1s: the smaller label
    assert table == {"x": 1, "y": 0, "z": 0}
    table, default = fit_rule(values[:6] + ["y", "z"], labels[:6] + [1, 1])   # now five 1s
    assert default == 1 and table == {"x": 1, "y": 1, "z": 1}   # y ties 2:2 and takes the default


def test_naive_bayes_reads_single_tokens_but_not_their_order():
    # Label 1 whenever B holds token 7: naive Bayes finds it. Label 1 whenever B's token is A's + 1
    # (a relation between the segments, like the order of two events): it does not.
    rng = np.random.default_rng(0)
    fit, score = [], []
    for pairs_ in (fit, score):
        for _ in range(400):
            a, b = rng.integers(10, size=3).tolist(), rng.integers(10, size=3).tolist()
            pairs_.append((a, b, int(7 in b)))
    assert naive_bayes(fit, score) > 0.95
    relation = []
    for x in rng.integers(10, size=2000).tolist():
        label = int(rng.random() < 0.5)
        relation.append(([x], [(x + 2 - label) % 10], label))   # every token alone is uniform
    assert abs(naive_bayes(relation[:1000], relation[1000:]) - 0.5) < 0.07


@pytest.fixture(scope="module")
def tiny_tokenizer():
    return Tokenizer.train(["Red fish swim. Blue birds fly far away. Green frogs sit"], 60)


def example(tokenizer, a, b, label, mask_at=None):
    """[CLS] a [SEP] b [SEP] with no token selected for MLM, or the token at ``mask_at`` masked."""
    a, b = tokenizer.encode(a), tokenizer.encode(b)
    ids = np.array([tokenizer.cls_id, *a, tokenizer.sep_id, *b, tokenizer.sep_id])
    labels = np.full_like(ids, -100)
    if mask_at is not None:
        labels[mask_at], ids[mask_at] = ids[mask_at], tokenizer.mask_id
    return {"input_ids": ids, "labels": labels, "sentence_order_label": label,
            "token_type_ids": np.array([0] * (len(a) + 2) + [1] * (len(b) + 1))}


@pytest.mark.parametrize("ended_label", [0, 1])
def test_a_planted_leak_is_found_whichever_way_it_points(tiny_tokenizer, ended_label):
    # The label says whether A ends with a full stop (and so, here, does which segment holds the
    # one full stop; the rules that read it are not asserted on).
    t = tiny_tokenizer
    ended, cut = ("Red fish swim.", " Blue birds fly"), ("Red fish swim", " Blue birds fly.")
    pairs = [(ended, ended_label), (cut, 1 - ended_label)] * 10
    examples = [example(t, a, b, label) for (a, b), label in pairs]
    # The last token of A masked in every scored example: the rule reads the original back.
    masked = [example(t, a, b, label, mask_at=len(t.encode(a))) for (a, b), label in pairs]
    accuracies = cue_accuracies(examples, masked, t)
    assert accuracies["ends_with_punctuation"] == accuracies["last_token_a"] == 1.0
    assert accuracies["majority"] == 0.5
    assert accuracies["first_token_a"] == accuracies["first_token_b"] == 0.5   # the same in all
    assert set(accuracies) == {"majority", *CUES, "naive_bayes"}
    # Batches (padded, the label as an array) give the same numbers as the examples they hold.
    batches = [collate(masked[i:i + 6], "sentence_order_label", pad_to=20) for i in range(0, 20, 6)]
    assert cue_accuracies(examples, batches, t) == accuracies


def test_cue_accuracies_refuses_bad_input(tiny_tokenizer):
    one = [example(tiny_tokenizer, "Red fish.", " Blue birds.", 0)]
    with pytest.raises(ValueError, match="unknown cue 'colour'"):
        cue_accuracies(one, one, tiny_tokenizer, cues=["colour"])
    with pytest.raises(ValueError, match="need examples"):
        cue_accuracies(one, [], tiny_tokenizer)
    with pytest.raises(ValueError, match="exactly one of"):
        cue_accuracies([{**one[0], "next_sentence_label": 1}], one, tiny_tokenizer)


@pytest.fixture(scope="module")
def halves():
    """The default corpus with the experiments' tokenizer (V = 1000), split in two halves of
    whole documents: rules are fitted on one and scored on the other."""
    documents = default_corpus()
    tokenizer = load_tokenizer(documents, vocab_size=1000)
    return (*split_documents(documents, eval_fraction=0.5, seed=0), tokenizer)


@pytest.mark.parametrize("task", ["sop", "nsp"])
def test_no_surface_cue_tells_the_label(halves, task):
    fit_documents, score_documents, tokenizer = halves
    fit, score = (PretrainingData(documents, tokenizer, max_seq_length=64, task=task)
                  for documents in (fit_documents, score_documents))
    fit_examples = [e for seed in range(3) for e in fit.examples(seed)]
    score_examples = [e for seed in range(10, 14) for e in score.examples(seed)]
    # Tolerance, honestly: with no leak, a rule fitted elsewhere is right on each scored example
    # with probability 1/2, independently (every label is a fresh fair coin), so its accuracy over
    # n examples has standard deviation 0.5 / sqrt(n). n >= 1600 makes TOLERANCE at least 4 of
    # them: chance alone leaves the band with probability below 1e-4 per rule. A leak of 5 points
    # or more is then caught. (The pipeline before the fix scored 0.84 with the punctuation rule.)
    n = len(score_examples)
    assert n >= (4 * 0.5 / TOLERANCE) ** 2, n
    accuracies = cue_accuracies(fit_examples, score_examples, tokenizer)
    leaks = {cue: round(accuracy, 3) for cue, accuracy in accuracies.items()
             if abs(accuracy - 0.5) > TOLERANCE}
    assert not leaks, f"{task}: cue-only rules beyond 0.5 ± {TOLERANCE} on {n} examples: {leaks}"


# --- the grammar corpus the reproduction pre-trains on ------------------------------------------
SOP_CEILING = 0.60   # the most a cue-only rule may score on held-out SOP pairs


@pytest.fixture(scope="module")
def grammar():
    """The grammar corpus as every run splits it, at the experiments' pair length (64): for each task
    the cue-rule table (every rule, the content ones too), fitted on one epoch of training examples
    and scored on 7 epochs of held-out ones, and those held-out pairs (A ids, B ids, label)."""
    documents = corpus_documents("grammar")
    tokenizer = load_tokenizer(documents, vocab_size=1000)
    train, held_out = split_documents(documents, eval_fraction=0.1, seed=0)
    out = {"tokenizer": tokenizer}
    for task in ("sop", "nsp"):
        fit = PretrainingData(train, tokenizer, max_seq_length=64, task=task).examples(0)
        score = [e for seed in range(10, 17)
                 for e in PretrainingData(held_out, tokenizer, max_seq_length=64, task=task).examples(seed)]
        table = {**cue_accuracies(fit, score, tokenizer), **cue_accuracies(fit, score, tokenizer, list(CONTENT_CUES))}
        out[task] = (table, pairs(score))
    return out


def test_no_cue_only_rule_tells_the_sentence_order_of_the_grammar_corpus(grammar):
    accuracies, held_out = grammar["sop"]
    n = len(held_out)
    assert n >= 1600, n           # 0.5 / sqrt(n) <= 0.0125: 0.60 is 8 standard deviations above chance
    assert set(accuracies) == {"majority", *CUES, *CONTENT_CUES, "naive_bayes"}
    over = {rule: round(a, 3) for rule, a in accuracies.items() if a > SOP_CEILING}
    assert not over, f"rules above {SOP_CEILING} on {n} held-out SOP pairs: {over}"


def events_in(tokenizer, ids):
    """The day's events a segment names, in order, as indices of EVENTS (read by this test from the
    text: an event's singular or plural verb phrase; "feed(s)" is left out, a relative clause's verb
    too)."""
    text = tokenizer.decode(ids).lower()
    found = []
    for index, (singular, plural, _) in enumerate(EVENTS):
        if singular != "feeds":
            found += [(m.start(), index) for phrase in (singular, plural)
                      for m in re.finditer(rf"\b{phrase}\b", text)]
    return [index for _, index in sorted(set(found))]


def test_the_sentence_order_is_in_the_events(grammar):
    # Reading the text decides it: B's events are less than half a day ahead of A's in order, more
    # than half when swapped (the day is a cycle of 16 events; a story spans at most 8).
    hits = []
    for a, b, label in grammar["sop"][1]:
        votes = [(eb - ea) % len(EVENTS) < len(EVENTS) // 2 for ea in events_in(grammar["tokenizer"], a)
                 for eb in events_in(grammar["tokenizer"], b)]
        if votes:
            hits.append(int(sum(votes) * 2 < len(votes)) == label)
    assert len(hits) > 1500 and np.mean(hits) > 0.95


def test_next_sentence_prediction_has_a_topic_signal(grammar):
    # A random B is from another of six places 5 times in 6: the rule "same place, so true
    # continuation" scores 1/2 + 1/2 · 5/6 = 0.92 where every segment names its place.
    accuracies, held_out = grammar["nsp"]
    assert len(held_out) >= 1600
    assert accuracies["same_topic"] > 0.85
    assert grammar["sop"][0]["same_topic"] <= SOP_CEILING   # one story either way
