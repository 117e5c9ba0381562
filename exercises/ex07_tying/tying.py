"""Exercise 7: weight tying with a factorized embedding (Press & Wolf, 2017; ALBERT's MLM head,
Lan et al., 2019).

With a factorized embedding the V × E word table is the part to share: the output head maps the
hidden state H -> E first, then scores it against every row of the same V × E table.

The library's ``AlbertMLMHead`` (minishare/models/albert.py) is an answer to task 1: please do
not look at it until you are done.
"""
from minishare import functional as F
from minishare.nn import LayerNorm, Linear, Module, Parameter, init


class TiedHead(Module):
    """Task 1. h (B, T, H) -> logits (B, T, V):
        logits = LayerNorm_E(gelu(dense(h))) @ Wᵀ + bias
    with ``dense`` a Linear(H, E), ``LayerNorm`` over E, W the word-embedding table (V × E)
    *itself* (the Parameter of ``word_embeddings``, not a copy) and ``bias`` a new Parameter of
    V zeros. Attribute names: dense, LayerNorm, weight, bias."""

    def __init__(self, word_embeddings, hidden_size):
        super().__init__()
        V, E = word_embeddings.weight.shape
        ### BEGIN SOLUTION task 1
        self.dense = Linear(hidden_size, E)
        self.LayerNorm = LayerNorm(E)
        self.weight = word_embeddings.weight                   # the same tensor: tied
        self.bias = Parameter(init.empty(V))
        ### END SOLUTION

    def forward(self, h):
        ### BEGIN SOLUTION task 1
        return F.linear(self.LayerNorm(F.gelu(self.dense(h))), self.weight, self.bias)   # (B, T, V)
        ### END SOLUTION


def tie(model):
    """Task 2. Tie an ``AlbertForPreTraining`` built with ``tie_word_embeddings=False``: make its
    MLM decoder use the word-embedding Parameter. Return how many parameters the model lost."""
    ### BEGIN SOLUTION task 2
    before = sum(p.size for p in model.parameters())
    model.predictions.decoder.weight = model.albert.embeddings.word_embeddings.weight
    return before - sum(p.size for p in model.parameters())
    ### END SOLUTION


def tying_status(model):
    """Task 3. "Is my tying real or a copy?" For an ``AlbertForPreTraining``: "tied" when the
    decoder's weight is the word-embedding Parameter itself, "copied" when it is another tensor
    holding the same values (it will drift apart at the first step), "untied" otherwise."""
    ### BEGIN SOLUTION task 3
    decoder = model.predictions.decoder.weight
    table = model.albert.embeddings.word_embeddings.weight
    if decoder is table:
        return "tied"
    if decoder.shape == table.shape and (decoder.data == table.data).all():
        return "copied"
    return "untied"
    ### END SOLUTION
