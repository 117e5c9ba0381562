"""Gives the output a dense H -> E of its own (ALBERT's MLM head, the usual tying of the table
alone) instead of going back through the projection: E·H more parameters, and the projection's
gradient misses the output's use."""
from minishare import functional as F
from minishare.nn import Linear


class FactorizedEmbedding(FactorizedEmbedding):      # noqa: F821
    def __init__(self, V, E, H):
        super().__init__(V, E, H)
        self.output_dense = Linear(H, E, bias=False) if E != H else None

    def logits(self, h):
        x = h if self.output_dense is None else self.output_dense(h)
        return F.linear(x, self.word_embeddings.weight)
