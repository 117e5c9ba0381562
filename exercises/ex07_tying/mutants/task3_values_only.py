"""Compares values only: a copy with the same values is reported "tied", although it is a
second tensor that will drift apart."""


def tying_status(model):
    decoder = model.predictions.decoder.weight
    table = model.albert.embeddings.word_embeddings.weight
    if decoder.shape == table.shape and (decoder.data == table.data).all():
        return "tied"
    return "untied"
