"""Exercise 9: sentence-order prediction (SOP) pairs that do not leak their label (ALBERT, Lan et
al., 2019, Sec. 3.1 and 4.1, Table 5).

A positive is two consecutive segments of one document in their order (label 0); a negative is the
same two segments swapped (label 1). The model should have to read the sentences to tell them
apart. If anything else gives the order away (where a segment was cut, which one is longer) a
model learns that cue instead, and its "SOP accuracy" says nothing about coherence.

The cure is symmetry: build A and B by mirror-image rules, so that whatever a cue measures on A
it measures with the same distribution on B. A document is a list of sentences; a sentence is a
list of token ids. Every random draw comes from the ``rng`` passed in (a
``numpy.random.Generator``).

The library's ``minishare/data/pretraining.py`` builds SOP pairs too, and had exactly such a leak
(issue 8); whatever its state when you read this, write your own: the grader does not let a
submission use it, nor ``minishare.analysis.cues``.
"""


def truncate_segment(tokens, limit, rng):
    """Task 1. A copy of ``tokens`` shortened to at most ``limit`` tokens, one token at a time,
    from the front or the back with probability 1/2 each (so where a segment was cut says nothing
    about which segment it is)."""
    ### BEGIN SOLUTION task 1
    tokens = list(tokens)
    while len(tokens) > limit:
        del tokens[0 if rng.random() < 0.5 else -1]
    return tokens
    ### END SOLUTION


def sop_pairs(documents, rng, max_num_tokens):
    """Task 2. One SOP example (first, second, label) for every boundary between two consecutive
    sentences j and j + 1 of every document, built as mirror images of each other, each within
    half the budget, ``half = max_num_tokens // 2``:

    - A ends with sentence j and takes the sentences before it, nearest first, while the total
      stays ≤ half; B starts with sentence j + 1 and takes the sentences after it while the total
      stays ≤ half (each holds at least its one sentence);
    - each is cut to ``half`` tokens with ``truncate_segment``;
    - with probability 1/2 the pair keeps the text's order (A, B, 0), else it is swapped (B, A, 1).
    """
    ### BEGIN SOLUTION task 2
    half, pairs = max_num_tokens // 2, []
    for document in documents:
        for j in range(len(document) - 1):
            start = j                                           # A = document[start:j + 1]
            while start > 0 and sum(map(len, document[start - 1:j + 1])) <= half:
                start -= 1
            end = j + 2                                         # B = document[j + 1:end]
            while end < len(document) and sum(map(len, document[j + 1:end + 1])) <= half:
                end += 1
            a = truncate_segment([t for sentence in document[start:j + 1] for t in sentence], half, rng)
            b = truncate_segment([t for sentence in document[j + 1:end] for t in sentence], half, rng)
            pairs.append((b, a, 1) if rng.random() < 0.5 else (a, b, 0))
    return pairs
    ### END SOLUTION


def cue_accuracy(pairs, cue):
    """Task 3. How well a rule that never reads the sentences predicts the label: ``cue(first,
    second)`` returns True or False; the rule predicts label 1 when the cue is True, or its
    opposite, whichever scores better on ``pairs``. Returns that accuracy, in [0.5, 1]."""
    ### BEGIN SOLUTION task 3
    hits = sum(bool(cue(first, second)) == bool(label) for first, second, label in pairs)
    return max(hits, len(pairs) - hits) / len(pairs)
    ### END SOLUTION
