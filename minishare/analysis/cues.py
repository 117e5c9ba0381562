"""Cue-only baselines for SOP and NSP: how well the sentence-level label can be read from surface
cues alone, with no model and no reading of the sentences.

A cue is a function of the pair (segment A, segment B) that ignores what the sentences say: does
each segment end with sentence punctuation, which segment is longer, the first token of B, whether
B opens with a pronoun, and so on (``CUES``). The baseline of a cue is the best rule that reads only
that cue, fitted on one set of examples and scored on another::

    fit:    for every value v the cue takes on the fitting examples, predict the label most of them
            carry (ties, and values never seen when fitting, get the fitting set's majority label)
    score:  accuracy of that lookup table on the held-out examples

The table is fitted, not written by hand, so a leak is found whichever way it points (A ends with
a full stop may mean "in order" or "swapped"), and it is scored on other examples (best on other
documents), so the table cannot score by memorizing. With no leak a label is independent of every
cue and a rule scores chance, 0.5 (the labels are fair coins); the MLM masking is undone first
(the original ids are read back from ``labels``), so a cue the masking happens to hide still counts.
Beside the lookup rules, ``naive_bayes`` weighs every token of A and of B at once: any rule that
adds up what single words say, without relating a word of one segment to one of the other.

Two more rules read what the segments are about (``CONTENT_CUES``, asked for by name): do they
share a topic of the grammar corpus, and how many tokens do they share. That is the signal NSP is
meant to have (a random B is usually about something else), so on NSP they should score well above
chance; on SOP, whose two segments come from one text either way, they score chance like the rest.

    data = PretrainingData(train_documents, tokenizer, max_seq_length=64, task="sop")
    held_out = PretrainingData(eval_documents, tokenizer, max_seq_length=64, task="sop")
    cue_accuracies(data.examples(seed=0), held_out.examples(seed=1), tokenizer)
    # {"majority": ..., "ends_with_punctuation": ..., "longer_segment": ..., ...}: accuracies

Why it matters: ALBERT's argument for SOP over NSP (Lan et al., 2019, Sec. 3.1 and Table 5) is that
SOP cannot be solved by a shortcut (NSP can by topic); an order the data pipeline leaks through
truncation or sentence ends would be a shortcut of its own, and so would a corpus whose first
sentences look different from later ones (the grammar corpus once opened every story with "The",
and the first token of B told the order 81% of the time).
"""
import re
from collections import Counter

import numpy as np

from minishare.data.corpus import TOPICS
from minishare.data.pretraining import IGNORE_INDEX, TASKS

# The end of a sentence as the corpus reader cuts it: ., ! or ?, then closing brackets or quotes.
_SENTENCE_END = re.compile(r"[.!?][)\"”’]*$")
_SENTENCE_INSIDE = re.compile(r"[.!?][)\"”’]*(?=\s|$)")
_WORD = re.compile(r"[^\W\d_]+")
_OPENINGS = {"pronoun": {"he", "she", "it", "they", "we", "i", "you", "this", "these", "his", "her", "their", "its"},
             "connective": {"then", "later", "after", "so", "but", "and", "also", "however", "finally"},
             "article": {"the", "a", "an"}}


def _segments(example):
    """(A ids, B ids) of one example as they were before masking: [CLS] A [SEP] B [SEP]."""
    ids = np.where(example["labels"] != IGNORE_INDEX, example["labels"], example["input_ids"])
    n_a = int(np.sum(example["token_type_ids"] == 0))   # [CLS] A [SEP]
    return ids[1:n_a - 1].tolist(), ids[n_a:-1].tolist()


def _rows(examples_or_batches):
    """Example dicts from a list of examples (``PretrainingData.examples``) or of batches
    (``PretrainingData.batches``; padding is cut off by the attention mask)."""
    for item in examples_or_batches:
        if np.ndim(item["input_ids"]) == 1:
            yield item
            continue
        label_name = next(name for name in TASKS.values() if name in item)
        for row in range(len(item["input_ids"])):
            n = int(item["attention_mask"][row].sum())
            yield {"input_ids": item["input_ids"][row, :n], "labels": item["labels"][row, :n],
                   "token_type_ids": item["token_type_ids"][row, :n],
                   label_name: int(item[label_name][row])}


def pairs(examples_or_batches):
    """(A ids, B ids, label) of every example: SOP's or NSP's label, whichever it carries."""
    out = []
    for example in _rows(examples_or_batches):
        labels = [example[name] for name in TASKS.values() if name in example]
        if len(labels) != 1:
            raise ValueError("an example must carry exactly one of "
                             f"{sorted(TASKS.values())}, got keys {sorted(example)}")
        out.append((*_segments(example), int(labels[0])))
    return out


def _ends_sentence(tokenizer, ids):
    # The last few tokens, since BPE may split "." and a closing bracket into two tokens.
    return bool(_SENTENCE_END.search(tokenizer.decode(ids[-3:]).rstrip()))


def _starts_capital(tokenizer, ids):
    text = tokenizer.decode(ids[:1]).lstrip()
    return text[:1].isupper()


def _leading_space(tokenizer, ids):
    # A document's first sentence, if encoded without the space before it, would mark itself.
    return tokenizer.decode(ids[:1])[:1] == " "


def _opening(tokenizer, ids):
    """What kind of word a segment opens with: a pronoun or a connective (which refer back, so
    they open later sentences in real text), an article, or another word."""
    words = _WORD.findall(tokenizer.decode(ids[:3]).lower())
    word = words[0] if words else ""
    return next((kind for kind, members in _OPENINGS.items() if word in members), "other")


def _sentence_ends(tokenizer, ids):
    return len(_SENTENCE_INSIDE.findall(tokenizer.decode(ids)))


def _topics(tokenizer, ids):
    """The names of ``TOPICS`` whose things the segment mentions (a frozenset)."""
    words = set(_WORD.findall(tokenizer.decode(ids).lower()))
    return frozenset(topic for topic, things in TOPICS.items() if words.intersection(things))


def _same_topic(tokenizer, a, b):
    """Do A and B share a topic of the grammar corpus: "yes", "no", or "unknown" (one names none)."""
    topics_a, topics_b = _topics(tokenizer, a), _topics(tokenizer, b)
    if not topics_a or not topics_b:
        return "unknown"
    return "yes" if topics_a & topics_b else "no"


def _shared_tokens(a, b):
    """The share of B's distinct tokens that A holds too, in tenths: what two segments of one text
    have more of than two of different texts."""
    return round(10 * len(set(a) & set(b)) / max(len(set(b)), 1))


# name -> f(tokenizer, A ids, B ids): a hashable value; each reads only the surface of the pair.
CUES = {
    "ends_with_punctuation": lambda t, a, b: (_ends_sentence(t, a), _ends_sentence(t, b)),
    "starts_with_capital": lambda t, a, b: (_starts_capital(t, a), _starts_capital(t, b)),
    "leading_space": lambda t, a, b: (_leading_space(t, a), _leading_space(t, b)),
    "longer_segment": lambda t, a, b: int(np.sign(len(a) - len(b))),
    "length_a": lambda t, a, b: len(a),
    "length_b": lambda t, a, b: len(b),
    "length_difference": lambda t, a, b: len(a) - len(b),
    "total_length": lambda t, a, b: len(a) + len(b),
    "sentence_counts": lambda t, a, b: (_sentence_ends(t, a), _sentence_ends(t, b)),
    "first_token_a": lambda t, a, b: a[0],
    "first_token_b": lambda t, a, b: b[0],
    "second_token_a": lambda t, a, b: tuple(a[1:2]),
    "second_token_b": lambda t, a, b: tuple(b[1:2]),
    "first_tokens_a_and_b": lambda t, a, b: (a[0], b[0]),
    "opening_of_b": lambda t, a, b: _opening(t, b),
    "openings_of_a_and_b": lambda t, a, b: (_opening(t, a), _opening(t, b)),
    "last_token_a": lambda t, a, b: a[-1],
    "last_token_b": lambda t, a, b: b[-1],
    "last_word_a": lambda t, a, b: tuple(a[-2:-1]),
    "last_word_b": lambda t, a, b: tuple(b[-2:-1]),
    "seam": lambda t, a, b: (a[-1], b[0]),
}
# The same for what the segments are about: NSP's signal, not a cue of how the pair was made.
CONTENT_CUES = {
    "same_topic": _same_topic,
    "shared_tokens": lambda t, a, b: _shared_tokens(a, b),
}


def _majority(counts):
    """The most frequent label of a Counter; on a tie the smaller label, so fitting is repeatable."""
    return max(sorted(counts), key=counts.__getitem__)


def fit_rule(values, labels):
    """The majority-label lookup table of a cue: (table {value: label}, default label). The default
    is the majority of all ``labels``; a value whose labels tie gets the default."""
    default = _majority(Counter(labels))
    counts = {}
    for value, label in zip(values, labels):
        counts.setdefault(value, Counter())[label] += 1
    table = {}
    for value, count in counts.items():
        (top, n_top), *rest = count.most_common()
        table[value] = top if not rest or rest[0][1] < n_top else default
    return table, default


def naive_bayes(fit, score):
    """Held-out accuracy of naive Bayes on bags of tokens: the label predicted from the tokens of A
    and the tokens of B, each token a separate piece of evidence (add-one smoothed counts per label,
    A's and B's tokens counted apart), fitted on ``fit`` and scored on ``score`` ((A, B, label)
    lists, as ``pairs`` returns). It stands for every rule that adds up what single tokens say
    (this word in B, that word in A) without relating a word of one segment to one of the other."""
    counts, n_labels = {0: Counter(), 1: Counter()}, Counter()
    for a, b, label in fit:
        counts[label].update([("a", t) for t in a] + [("b", t) for t in b])
        n_labels[label] += 1
    size = len(set(counts[0]) | set(counts[1]))
    totals = {label: sum(c.values()) + size for label, c in counts.items()}

    def log_probability(a, b, label):
        evidence = [("a", t) for t in a] + [("b", t) for t in b]
        return (np.log(n_labels[label] + 1) + sum(np.log(counts[label][f] + 1) for f in evidence)
                - len(evidence) * np.log(totals[label]))

    predicted = [int(log_probability(a, b, 1) > log_probability(a, b, 0)) for a, b, _ in score]
    return float(np.mean([p == label for p, (_, _, label) in zip(predicted, score)]))


def cue_accuracies(fit_examples, score_examples, tokenizer, cues=None):
    """{rule: held-out accuracy}, the cue-rule table: ``"majority"`` (always the fitting set's
    majority label), each cue's fitted rule (its name) and, by default, ``"naive_bayes"``.
    ``fit_examples`` and ``score_examples``: lists of examples or of batches, SOP or NSP (both the
    same task); ``cues``: names from ``CUES`` or ``CONTENT_CUES`` (default: every cue of ``CUES``,
    and naive Bayes)."""
    fit, score = pairs(fit_examples), pairs(score_examples)
    if not fit or not score:
        raise ValueError(f"need examples to fit and to score, got {len(fit)} and {len(score)}")
    fit_labels = [label for _, _, label in fit]
    score_labels = np.array([label for _, _, label in score])
    accuracies = {"majority": float(np.mean(score_labels == _majority(Counter(fit_labels))))}
    known = {**CUES, **CONTENT_CUES}
    for name in cues or CUES:
        if name not in known:
            raise ValueError(f"unknown cue {name!r}: choose from {sorted(known)}")
        cue = known[name]
        table, default = fit_rule([cue(tokenizer, a, b) for a, b, _ in fit], fit_labels)
        predicted = np.array([table.get(cue(tokenizer, a, b), default) for a, b, _ in score])
        accuracies[name] = float(np.mean(predicted == score_labels))
    if cues is None:
        accuracies["naive_bayes"] = naive_bayes(fit, score)
    return accuracies
