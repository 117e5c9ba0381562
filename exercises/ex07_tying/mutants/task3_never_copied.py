"""Knows only identity: anything that is not the same Parameter is "untied", so a copy (the bug
the function exists to find) goes unreported."""


def tying_status(model):
    return "tied" if model.predictions.decoder.weight is model.albert.embeddings.word_embeddings.weight else "untied"
