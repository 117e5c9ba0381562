"""Cue accuracy that calls the cue as cue(second, first): the pair read back to front, so a cue
about "the first segment" is evaluated on the second."""


def cue_accuracy(pairs, cue):
    hits = sum(bool(cue(second, first)) == bool(label) for first, second, label in pairs)
    return max(hits, len(pairs) - hits) / len(pairs)
