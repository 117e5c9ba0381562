"""Exercise 9: sentence-order prediction (SOP) pairs that do not leak their label (ALBERT, Lan et
al., 2019, Sec. 3.1 and 4.1, Table 5).

A positive is two consecutive segments of one document in their order (label 0); a negative is the
same two segments swapped (label 1). The model should have to read the sentences to tell them
apart. If anything else gives the order away (where a segment was cut, which one is longer) a
model learns that cue instead, and its "SOP accuracy" says nothing about coherence.

A document is a list of sentences; a sentence is a list of token ids. Every random draw comes from
the ``rng`` passed in (a ``numpy.random.Generator``).

The library's ``minishare/data/pretraining.py`` builds SOP pairs too, and had exactly such a leak
(issue 8); whatever its state when you read this, write your own.
"""


def truncate_pair(a, b, max_num_tokens, rng):
    """Task 1. Shorten (copies of) segments a and b until len(a) + len(b) ≤ max_num_tokens: one
    token at a time from the currently longer segment (b when they are equal), from its front or
    its back with probability 1/2 each. Returns (a, b) as lists."""
    ### BEGIN SOLUTION task 1
    a, b = list(a), list(b)
    while len(a) + len(b) > max_num_tokens:
        longer = a if len(a) > len(b) else b
        del longer[0 if rng.random() < 0.5 else -1]
    return a, b
    ### END SOLUTION


def sop_pairs(documents, rng, max_num_tokens):
    """Task 2. SOP examples (first, second, label) from ``documents``.

    Walk each document's sentences in order, packing them into a chunk until it holds at least two
    sentences and at least ``max_num_tokens`` tokens, or the document ends (a last chunk of one
    sentence is dropped). Cut each chunk at a random sentence boundary into A (the sentences
    before) and B (the rest), both non-empty; truncate the pair with ``truncate_pair``; then with
    probability 1/2 keep the order (label 0) or swap (label 1)."""
    ### BEGIN SOLUTION task 2
    pairs = []
    for document in documents:
        chunk, i = [], 0
        while i < len(document):
            chunk.append(document[i])
            i += 1
            if i < len(document) and (len(chunk) < 2 or sum(map(len, chunk)) < max_num_tokens):
                continue
            if len(chunk) >= 2:
                cut = int(rng.integers(1, len(chunk)))
                a = [t for sentence in chunk[:cut] for t in sentence]
                b = [t for sentence in chunk[cut:] for t in sentence]
                a, b = truncate_pair(a, b, max_num_tokens, rng)   # before the swap: same rule for both orders
                label = int(rng.random() < 0.5)
                pairs.append((b, a, 1) if label else (a, b, 0))
            chunk = []
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
