"""Exercise 7: weight tying with a factorized embedding (Press & Wolf, 2017; ALBERT's MLM head,
Lan et al., 2019).

With a factorized embedding the V × E word table is the part to share: the output head maps the
hidden state H -> E first, then scores it against every row of the same V × E table.

This head normalizes with RMSNorm (Zhang & Sennrich, 2019), as T5 and LLaMA normalize, where
ALBERT's has a LayerNorm: RMSNorm(x) = x / sqrt(mean(x²) + eps) · g over the last axis, with a
gain g and no bias, nothing subtracted. Build it from Tensor operations (``*``, ``mean``,
``sqrt``, ``/``); autograd does the backward.

The library's ``AlbertMLMHead`` (minishare/models/albert.py, printed in chapter 7) is a
LayerNorm head: please do not look at it until you are done.
"""
from minishare import functional as F
from minishare.nn import Linear, Module, Parameter, init


class TiedHead(Module):
    """Task 1. h (B, T, H) -> logits (B, T, V):
        logits = RMSNorm_E(gelu(dense(h))) @ Wᵀ + bias
    with ``dense`` a Linear(H, E), ``gelu`` the exact one (``F.gelu``), RMSNorm over the last
    axis (E) with a Parameter ``gain`` of E ones and ``eps`` = 1e-6 inside the square root, W
    the word-embedding table (V × E) *itself* (the Parameter of ``word_embeddings``, not a copy)
    and ``bias`` a new Parameter of V zeros. Attribute names: dense, gain, weight, bias."""

    eps = 1e-6

    def __init__(self, word_embeddings, hidden_size):
        super().__init__()
        V, E = word_embeddings.weight.shape
        ### BEGIN SOLUTION task 1
        self.dense = Linear(hidden_size, E)
        self.gain = init.ones_(Parameter(init.empty(E)))
        self.weight = word_embeddings.weight                   # the same tensor: tied
        self.bias = Parameter(init.empty(V))
        ### END SOLUTION

    def forward(self, h):
        ### BEGIN SOLUTION task 1
        x = F.gelu(self.dense(h))                                               # (B, T, E)
        x = x / ((x * x).mean(axis=-1, keepdims=True) + self.eps).sqrt() * self.gain   # RMSNorm over E
        return F.linear(x, self.weight, self.bias)                              # (B, T, V)
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
