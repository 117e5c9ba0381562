"""Scores against the table's values (``weight.numpy()``) instead of the tensor: the logits are
right, but no gradient reaches the table from the output, so the output is not tied at all."""
import minishare
from minishare import functional as F


class FactorizedEmbedding(FactorizedEmbedding):      # noqa: F821  (the solution's class)
    def logits(self, h):
        x = h if self.projection is None else h @ self.projection.weight
        return F.linear(x, minishare.tensor(self.word_embeddings.weight.numpy()))
