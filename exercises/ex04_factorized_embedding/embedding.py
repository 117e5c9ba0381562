"""Exercise 4: ALBERT's factorized embedding parameterization (Lan et al., 2019, Sec. 3.1), with
an output layer tied to both of its factors.

BERT looks each of V tokens up in a V × H table. ALBERT looks it up in a V × E table and projects
E -> H with a dense layer (weight E × H and a bias of H), which pays when E ≪ H.

Tying the output to the embedding (Press & Wolf, 2017) usually shares the V × E table alone and
gives the output a dense H -> E of its own. Here the output reuses the embedding's projection as
well, transposed, so that it adds no parameter at all (as adaptive input representations tie
their projections, Baevski & Auli, 2019): logits = (h P) Wᵀ, with P (H × E) the projection's
weight and W (V × E) the table.

The library's ``minishare/models/embeddings.py`` contains the input half of the module: please
do not look at it until you are done. Do not count by building modules either: count with the
formula.
"""
from minishare import functional as F
from minishare.nn import Embedding, Linear, Module


def embedding_parameters(V, E, H):
    """Task 1. Parameters of the word embedding plus the projection: V·H when E == H (no
    projection, BERT), else V·E for the table, E·H for the projection's weight, H for its bias.
    (The tied output of task 2 adds nothing to this.)"""
    ### BEGIN SOLUTION task 1
    return V * H if E == H else V * E + E * H + H
    ### END SOLUTION


class FactorizedEmbedding(Module):
    """Task 2. ``forward``: ids (B, T) -> (B, T, H): ``word_embeddings`` (an ``Embedding(V, E)``),
    then ``projection`` (a ``Linear(E, H)``) unless E == H, in which case ``projection`` is None.
    Name the two attributes exactly so.

    ``logits``: h (B, T, H) -> (B, T, V), the output tied to both factors: h times the
    projection's weight P (H × E; no bias), then scores against every row of the table W (V × E),
    logits = (h P) Wᵀ; with E == H simply h Wᵀ. It uses the module's own two tensors (not copies)
    and creates no parameter."""

    def __init__(self, V, E, H):
        super().__init__()
        ### BEGIN SOLUTION task 2
        self.word_embeddings = Embedding(V, E)
        self.projection = Linear(E, H) if E != H else None
        ### END SOLUTION

    def forward(self, ids):
        ### BEGIN SOLUTION task 2
        x = self.word_embeddings(ids)                                  # (B, T, E)
        return x if self.projection is None else self.projection(x)   # (B, T, H)
        ### END SOLUTION

    def logits(self, h):
        ### BEGIN SOLUTION task 2
        # Linear computes x Pᵀ + b with P (H, E): going back, H -> E is h P, the transpose.
        x = h if self.projection is None else h @ self.projection.weight   # (B, T, E)
        return F.linear(x, self.word_embeddings.weight)                    # (B, T, V)
        ### END SOLUTION


def break_even_embedding_size(V, H):
    """Task 3. The largest E < H for which the factorized embedding has fewer parameters than
    BERT's V × H table (solve the inequality in integers; no loop over E: V and H may be huge)."""
    ### BEGIN SOLUTION task 3
    # V E + E H + H < V H  <=>  E < (V H - H) / (V + H); strict, so one less when it divides.
    bound = (V * H - H) // (V + H)
    return bound if bound * (V + H) < V * H - H else bound - 1
    ### END SOLUTION
