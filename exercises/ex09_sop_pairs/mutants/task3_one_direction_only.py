"""Cue accuracy of the rule "label 1 when the cue holds" only: a cue that points the other way
(True means label 0) scores below chance instead of being found out."""


def cue_accuracy(pairs, cue):
    hits = sum(bool(cue(first, second)) == bool(label) for first, second, label in pairs)
    return hits / len(pairs)
