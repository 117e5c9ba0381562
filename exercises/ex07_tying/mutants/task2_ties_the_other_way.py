"""Ties in the wrong direction: makes the word embedding use the decoder's Parameter. The model
is tied and loses V × E numbers, but the input table now holds the decoder's values."""


def tie(model):
    before = sum(p.size for p in model.parameters())
    model.albert.embeddings.word_embeddings.weight = model.predictions.decoder.weight
    return before - sum(p.size for p in model.parameters())
