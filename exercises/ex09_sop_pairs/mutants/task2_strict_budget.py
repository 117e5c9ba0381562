"""Segments that grow only while the total stays strictly below half the budget: a sentence that
would fill the half exactly is left out, so A and B hold one sentence fewer than they may."""


def sop_pairs(documents, rng, max_num_tokens):
    half, pairs = max_num_tokens // 2, []
    for document in documents:
        for j in range(len(document) - 1):
            start = j
            while start > 0 and sum(map(len, document[start - 1:j + 1])) < half:
                start -= 1
            end = j + 2
            while end < len(document) and sum(map(len, document[j + 1:end + 1])) < half:
                end += 1
            a = truncate_segment([t for sentence in document[start:j + 1] for t in sentence], half, rng)
            b = truncate_segment([t for sentence in document[j + 1:end] for t in sentence], half, rng)
            pairs.append((b, a, 1) if rng.random() < 0.5 else (a, b, 0))
    return pairs
