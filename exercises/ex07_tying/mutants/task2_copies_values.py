"""Ties by copying the values into a new Parameter and reports V × E saved: the identity test
fails, the two tables drift apart at the first step and nothing is saved."""
from minishare.nn import Parameter


def tie(model):
    table = model.albert.embeddings.word_embeddings.weight
    model.predictions.decoder.weight = Parameter(table.data.copy())
    return table.size
