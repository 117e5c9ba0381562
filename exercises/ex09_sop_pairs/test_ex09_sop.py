"""Cases of exercise 9 on a synthetic corpus whose every word is unique (so a segment can be found
in its document) and whose sentences start with a capital token and end with a period token (the
cues a leak would use). Cue-only rules must score at chance: within five binomial standard
deviations of 50%.

The corpus is drawn on the grader's side (``given``; a hidden case's anew for every submission).
Each probe calls ``sop`` (the student's module) and returns the pairs, or the surface of each pair
(its first and last tokens, lengths and label); the hidden judges compute every accuracy here, in
NumPy, never with the submission's own ``cue_accuracy`` alone. That count (``best_of_rule``) is
task 3's answer, so it sits with the hidden cases, which the release leaves out: a visible judge
holds to chance the submission's own ``cue_accuracy``, which the hand-worked case checks."""
import math

import numpy as np

from minishare.grader.cases import case, decode, encode

PERIOD, CAPITALS = 1, range(10, 60)


def corpus(rng, n_documents):
    """Documents of 2 to 9 sentences, each a capital, 2 to 17 words used nowhere else, a period."""
    counter, documents = 1000, []
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


def as_text(pair):
    """A pair as JSON text: which segment comes first, and so the lengths of the two lists, depends
    on how the submission uses its rng, so it is the judge's business, not part of the structure
    the grader compares with the reference's."""
    return encode(pair)


def surface(pairs):
    """What a cue may read of each pair, and its label: (first[0], first[-1], second[0],
    second[-1], len(first), len(second), label) per row, an int array (P, 7)."""
    return np.array([[f[0], f[-1], s[0], s[-1], len(f), len(s), int(label)] for f, s, label in pairs],
                    dtype=np.int64).reshape(-1, 7)


@case("ex09_task1")
def test_truncation_fits_keeps_contiguous_text_and_cuts_both_ends(sop):
    rng = np.random.default_rng(0)
    return [sop.truncate_segment(list(range(30)), 18, rng) for _ in range(300)]


@test_truncation_fits_keeps_contiguous_text_and_cuts_both_ends.judge
def _(out, ref):
    fronts = backs = 0
    for kept in out:
        assert len(kept) == 18 and kept == list(range(kept[0], kept[0] + 18)), kept   # contiguous
        fronts += kept[0] > 0
        backs += kept[-1] < 29
    assert fronts > 250 and backs > 250, (fronts, backs)      # 12 cuts: both ends almost always


@case("ex09_task2")
def test_pairs_are_consecutive_segments_in_or_against_order(sop, given):
    return [as_text(pair) for pair in sop.sop_pairs(given["documents"], np.random.default_rng(2), max_num_tokens=40)]


@test_pairs_are_consecutive_segments_in_or_against_order.given
def _(rng):
    return {"documents": corpus(rng, 150)}


@test_pairs_are_consecutive_segments_in_or_against_order.judge
def _(out, ref, given):
    documents, pairs = given["documents"], [decode(text) for text in out]
    stream = [t for d in documents for s in d for t in s]
    position = {t: i for i, t in enumerate(stream) if t >= 1000}
    assert len(pairs) == sum(len(d) - 1 for d in documents), len(pairs)     # one per sentence boundary
    for first, second, label in pairs:
        assert first and second and len(first) <= 20 and len(second) <= 20, (first, second)
        f, s = locate(first, stream, position), locate(second, stream, position)
        if label == 0:
            assert f + len(first) <= s, "label 0 must keep the text's order"
        else:
            assert label == 1 and s + len(second) <= f, "label 1 must be the swapped pair"
    labels = [label for _, _, label in pairs]
    assert chance(max(np.mean(labels), 1 - np.mean(labels)), len(labels)), np.mean(labels)


@case("ex09_task3")
def test_cue_accuracy_hand_worked(sop):
    pairs = [([1], [2, 2], 1), ([1, 1], [2], 0), ([1], [2], 0), ([1, 1, 1], [2], 1)]
    return [sop.cue_accuracy(pairs, lambda f, s: len(f) < len(s)),
            sop.cue_accuracy(pairs, lambda f, s: len(f) >= len(s)),
            sop.cue_accuracy(pairs, lambda f, s: True)]


@test_cue_accuracy_hand_worked.judge
def _(out, ref):
    assert out == [0.75, 0.75, 0.5], out


@case("ex09_task3")
def test_no_cue_gives_the_label_away(sop, given):
    # half budget 12 < most sentences: nearly every segment is cut, so a cut that depends on the
    # segment's role would show (cutting A at its front and B at its back scores 72% here)
    two = sop.cue_accuracy([([1], [2, 2], 0), ([1, 1], [2], 1)], CUES["first is longer"])   # 1.0
    pairs = sop.sop_pairs(given["documents"], np.random.default_rng(4), max_num_tokens=24)
    return {"two": two, "surface": surface(pairs),
            "accuracy": {name: sop.cue_accuracy(pairs, cue) for name, cue in CUES.items()}}


@test_no_cue_gives_the_label_away.given
def _(rng):
    return {"documents": corpus(rng, 800)}


@test_no_cue_gives_the_label_away.judge
def _(out, ref):
    assert out["two"] == 1.0, out["two"]
    rows = out["surface"]
    assert len(rows) > 3000, len(rows)
    # the submission's own accuracies (its pairs are its own, so the reference's are no yardstick);
    # the hidden cases recount them from the surface
    for name, accuracy in out["accuracy"].items():
        assert isinstance(accuracy, float) and 0.5 <= accuracy <= 1, (name, accuracy)
        assert chance(accuracy, len(rows)), (name, accuracy)


### BEGIN HIDDEN TESTS
# The accuracy of a cue counted in NumPy, for the hidden judges: task 3's answer, so the release
# must not ship it.
def cue_values(rows):
    """{cue name: bool array (P,)} of ``CUES`` computed from ``surface`` rows."""
    capital = (rows >= CAPITALS.start) & (rows < CAPITALS.stop)
    return {"first ends a sentence": rows[:, 1] == PERIOD, "second ends a sentence": rows[:, 3] == PERIOD,
            "first starts a sentence": capital[:, 0], "second starts a sentence": capital[:, 2],
            "first is longer": rows[:, 4] > rows[:, 5]}


def best_of_rule(cue, labels):
    """Accuracy of "label 1 when the cue holds" or of its opposite, whichever is higher."""
    hits = int(np.sum(np.asarray(cue, dtype=bool) == np.asarray(labels, dtype=bool)))
    return max(hits, len(labels) - hits) / len(labels)


@case("ex09_task1")
def test_truncation_leaves_short_segments_alone_and_copies(sop):
    short, long = [1, 2, 3], list(range(10))
    kept = sop.truncate_segment(short, 5, np.random.default_rng(5))
    snapshot = list(kept)
    kept.append(9)
    cut = sop.truncate_segment(long, 4, np.random.default_rng(6))
    return {"kept": snapshot, "short after": short, "cut": len(cut), "long after": long}


@test_truncation_leaves_short_segments_alone_and_copies.judge
def _(out, ref):
    assert out["kept"] == [1, 2, 3] and out["short after"] == [1, 2, 3], out
    assert out["cut"] == 4 and out["long after"] == list(range(10)), "the input must not be modified"


def a_seed(rng):
    """A seed for the submission's own rng, drawn by the grader."""
    return int(rng.integers(2 ** 32))


@case("ex09_task1")
def test_each_cut_is_a_fair_coin(sop, given):
    """30 tokens cut to 18: the front loses Binomial(12, 1/2) tokens (mean 6, variance 3), not a
    uniform number of them, and not always the same end."""
    rng = np.random.default_rng(given["seed"])
    return [sop.truncate_segment(list(range(30)), 18, rng)[0] for _ in range(3000)]


@test_each_cut_is_a_fair_coin.given
def _(rng):
    return {"seed": a_seed(rng)}


@test_each_cut_is_a_fair_coin.judge
def _(out, ref):
    starts = np.asarray(out, dtype=np.float64)
    assert len(starts) == 3000 and starts.min() >= 0 and starts.max() <= 12
    assert abs(starts.mean() - 6.0) < 5 * math.sqrt(3.0 / 3000), starts.mean()       # about ±0.16
    assert abs(starts.var() - 3.0) < 0.6, starts.var()                               # uniform: 14


@case("ex09_task2")
def test_documents_of_one_sentence_give_no_pair_and_seed_repeats_and_mirror(sop, given):
    # three sentences of 5 tokens, half budget 10: A and B take two sentences each where they exist
    a1, b1, c1 = [10, 1001, 1002, 1003, 1], [11, 1004, 1005, 1006, 1], [12, 1007, 1008, 1009, 1]
    twice = [sop.sop_pairs(given["documents"], np.random.default_rng(given["seed"]), 25) for _ in range(2)]
    return {"single": sop.sop_pairs([[[10, 1000, 1]]], np.random.default_rng(6), 40),
            "twice": [[as_text(pair) for pair in pairs] for pairs in twice],
            "mirror": [as_text(pair) for pair in sop.sop_pairs([[a1, b1, c1]], np.random.default_rng(9), 20)]}


@test_documents_of_one_sentence_give_no_pair_and_seed_repeats_and_mirror.given
def _(rng):
    return {"documents": corpus(rng, 30), "seed": a_seed(rng)}


@test_documents_of_one_sentence_give_no_pair_and_seed_repeats_and_mirror.judge
def _(out, ref):
    assert out["single"] == [], out["single"]
    assert out["twice"][0] == out["twice"][1], "the same seed must give the same pairs"
    a1, b1, c1 = [10, 1001, 1002, 1003, 1], [11, 1004, 1005, 1006, 1], [12, 1007, 1008, 1009, 1]
    in_order = sorted([p[1], p[0]] if p[2] else [p[0], p[1]] for p in map(decode, out["mirror"]))
    assert in_order == sorted([[a1, b1 + c1], [a1 + b1, c1]]), in_order


@case("ex09_task2")
def test_pairs_leak_no_cue(sop, given):
    """The pairs themselves, judged here: no boundary or length cue may predict the order."""
    return surface(sop.sop_pairs(given["documents"], np.random.default_rng(given["seed"]), max_num_tokens=24))


@test_pairs_leak_no_cue.given
def _(rng):
    return {"documents": corpus(rng, 800), "seed": a_seed(rng)}


@test_pairs_leak_no_cue.judge
def _(out, ref):
    assert len(out) > 3000, len(out)
    for name, cue in cue_values(out).items():
        assert chance(best_of_rule(cue, out[:, 6]), len(out)), (name, best_of_rule(cue, out[:, 6]))


@case("ex09_task3")
def test_no_combination_of_boundary_cues_predicts_the_label(sop, given):
    """A lookup table over the four boundary cues, fitted on half of the pairs, scored on the other."""
    return surface(sop.sop_pairs(given["documents"], np.random.default_rng(given["seed"]), max_num_tokens=16))


@test_no_combination_of_boundary_cues_predicts_the_label.given
def _(rng):
    return {"documents": corpus(rng, 800), "seed": a_seed(rng)}


@test_no_combination_of_boundary_cues_predicts_the_label.judge
def _(out, ref):
    values = cue_values(out)
    keys = [tuple(row) for row in np.stack([values[name] for name in list(CUES)[:4]], axis=1)]
    labels = out[:, 6].tolist()
    fit = {}
    for key, label in zip(keys[::2], labels[::2]):
        fit.setdefault(key, []).append(label)
    rule = {key: np.mean(v) > 0.5 for key, v in fit.items()}
    test = list(zip(keys[1::2], labels[1::2]))
    accuracy = np.mean([rule.get(key, False) == bool(label) for key, label in test])
    assert chance(max(accuracy, 1 - accuracy), len(test)), accuracy


@case("ex09_task3")
def test_cue_accuracy_on_random_pairs_and_cues(sop, given):
    """Random pairs, random labels and cues that do lean on the label: the accuracy of the better
    of the rule and its opposite, over every pair."""
    pairs = given["pairs"]
    cues = [lambda f, s: f[0] > 4, lambda f, s: len(f) + len(s) > 5, lambda f, s: s[-1] % 3 == 0]
    return {"accuracy": [sop.cue_accuracy(pairs, cue) for cue in cues],
            "leaning": sop.cue_accuracy([(f, s, label) for f, s, label in pairs if f[0] > 4 or label],
                                        lambda f, s: f[0] > 4)}


@test_cue_accuracy_on_random_pairs_and_cues.given
def _(rng):
    def segment():
        return rng.integers(0, 9, int(rng.integers(1, 6))).tolist()
    return {"pairs": [[segment(), segment(), int(rng.integers(2))] for _ in range(401)]}


@test_cue_accuracy_on_random_pairs_and_cues.judge
def _(out, ref, given):
    rows = surface(given["pairs"])
    expected = [best_of_rule(rows[:, 0] > 4, rows[:, 6]), best_of_rule(rows[:, 4] + rows[:, 5] > 5, rows[:, 6]),
                best_of_rule(rows[:, 3] % 3 == 0, rows[:, 6])]
    kept = (rows[:, 0] > 4) | (rows[:, 6] == 1)
    expected.append(best_of_rule(rows[kept, 0] > 4, rows[kept, 6]))
    got = out["accuracy"] + [out["leaning"]]
    for g, e in zip(got, expected):
        assert isinstance(g, float) and math.isclose(g, e, rel_tol=1e-12), (got, expected)
### END HIDDEN TESTS
