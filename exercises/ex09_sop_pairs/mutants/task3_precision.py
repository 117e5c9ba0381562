"""Cue accuracy measured only on the pairs where the cue holds ("when the cue fires, how often is
the label 1?"): a precision, not the accuracy of a rule over every pair."""


def cue_accuracy(pairs, cue):
    fired = [label for first, second, label in pairs if cue(first, second)]
    if not fired:
        return 0.5
    ones = sum(bool(label) for label in fired) / len(fired)
    return max(ones, 1 - ones)
