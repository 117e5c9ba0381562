"""Pairs whose A keeps its end and B keeps its start (A cut at its front, B at its back, as a
reader would keep the text near the boundary), then swapped: the cut marks the segment's role,
so after the swap "does the first segment end a sentence?" gives the label away."""


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
            a = [t for sentence in document[start:j + 1] for t in sentence][-half:]
            b = [t for sentence in document[j + 1:end] for t in sentence][:half]
            pairs.append((b, a, 1) if rng.random() < 0.5 else (a, b, 0))
    return pairs
