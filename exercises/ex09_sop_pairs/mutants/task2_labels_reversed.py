"""Pairs labelled the other way round (1 for the text's order, 0 for the swap): "is the order
right?" answered yes = 1, against the exercise's convention (ALBERT's: a positive is label 0)."""


def sop_pairs(documents, rng, max_num_tokens):
    half, pairs = max_num_tokens // 2, []
    for document in documents:
        for j in range(len(document) - 1):
            start = j
            while start > 0 and sum(map(len, document[start - 1:j + 1])) <= half:
                start -= 1
            end = j + 2
            while end < len(document) and sum(map(len, document[j + 1:end + 1])) <= half:
                end += 1
            a = truncate_segment([t for sentence in document[start:j + 1] for t in sentence], half, rng)
            b = truncate_segment([t for sentence in document[j + 1:end] for t in sentence], half, rng)
            pairs.append((b, a, 0) if rng.random() < 0.5 else (a, b, 1))
    return pairs
