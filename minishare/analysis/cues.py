"""Cue-only baselines for SOP and NSP: how well the sentence-level label can be read from surface
cues alone, with no model and no reading of the sentences.

A cue is a function of the pair (segment A, segment B) that ignores what the sentences say: does
each segment end with sentence punctuation, which segment is longer, the first token of B, and so
on (``CUES``). The baseline of a cue is the best rule that reads only that cue, fitted on one set
of examples and scored on another::

    fit:    for every value v the cue takes on the fitting examples, predict the label most of them
            carry (ties, and values never seen when fitting, get the fitting set's majority label)
    score:  accuracy of that lookup table on the held-out examples

The table is fitted, not written by hand, so a leak is found whichever way it points (A ends with
a full stop may mean "in order" or "swapped"), and it is scored on other examples (best on other
documents), so the table cannot score by memorizing. With no leak a label is independent of every
cue and a rule scores chance, 0.5 (the labels are fair coins); the MLM masking is undone first
(the original ids are read back from ``labels``), so a cue the masking happens to hide still counts.

    data = PretrainingData(train_documents, tokenizer, max_seq_length=64, task="sop")
    held_out = PretrainingData(eval_documents, tokenizer, max_seq_length=64, task="sop")
    cue_accuracies(data.examples(seed=0), held_out.examples(seed=1), tokenizer)
    # {"majority": ..., "ends_with_punctuation": ..., "longer_segment": ..., ...}: accuracies

Why it matters: ALBERT's argument for SOP over NSP (Lan et al., 2019, Sec. 3.1 and Table 5) is that
SOP cannot be solved by a shortcut (NSP can by topic); an order the data pipeline leaks through
truncation or sentence ends would be a shortcut of its own.
"""
import re
from collections import Counter

import numpy as np

from minishare.data.pretraining import IGNORE_INDEX, TASKS

# The end of a sentence as the corpus reader cuts it: ., ! or ?, then closing brackets or quotes.
_SENTENCE_END = re.compile(r"[.!?][)\"”’]*$")


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


# name -> f(tokenizer, A ids, B ids): a hashable value; each reads only the surface of the pair.
CUES = {
    "ends_with_punctuation": lambda t, a, b: (_ends_sentence(t, a), _ends_sentence(t, b)),
    "starts_with_capital": lambda t, a, b: (_starts_capital(t, a), _starts_capital(t, b)),
    "leading_space": lambda t, a, b: (_leading_space(t, a), _leading_space(t, b)),
    "longer_segment": lambda t, a, b: int(np.sign(len(a) - len(b))),
    "length_a": lambda t, a, b: len(a),
    "length_b": lambda t, a, b: len(b),
    "total_length": lambda t, a, b: len(a) + len(b),
    "first_token_a": lambda t, a, b: a[0],
    "first_token_b": lambda t, a, b: b[0],
    "last_token_a": lambda t, a, b: a[-1],
    "last_token_b": lambda t, a, b: b[-1],
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


def cue_accuracies(fit_examples, score_examples, tokenizer, cues=None):
    """{cue name: held-out accuracy of its fitted rule}, plus ``"majority"``: always predicting
    the fitting set's majority label. ``fit_examples`` and ``score_examples``: lists of examples
    or of batches, SOP or NSP (both the same task); ``cues``: names from ``CUES`` (default all)."""
    fit, score = pairs(fit_examples), pairs(score_examples)
    if not fit or not score:
        raise ValueError(f"need examples to fit and to score, got {len(fit)} and {len(score)}")
    fit_labels = [label for _, _, label in fit]
    score_labels = np.array([label for _, _, label in score])
    accuracies = {"majority": float(np.mean(score_labels == _majority(Counter(fit_labels))))}
    for name in cues or CUES:
        if name not in CUES:
            raise ValueError(f"unknown cue {name!r}: choose from {sorted(CUES)}")
        cue = CUES[name]
        table, default = fit_rule([cue(tokenizer, a, b) for a, b, _ in fit], fit_labels)
        predicted = np.array([table.get(cue(tokenizer, a, b), default) for a, b, _ in score])
        accuracies[name] = float(np.mean(predicted == score_labels))
    return accuracies
