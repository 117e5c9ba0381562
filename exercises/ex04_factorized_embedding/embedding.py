"""Exercise 4: ALBERT's factorized embedding parameterization (Lan et al., 2019, Sec. 3.1).

BERT looks each of V tokens up in a V × H table. ALBERT looks it up in a V × E table and projects
E -> H with a dense layer (weight E × H and a bias of H), which pays when E ≪ H.

The library's ``minishare/models/embeddings.py`` contains the module: please do not look at it
until you are done.
"""
from minishare.nn import Embedding, Linear, Module


def embedding_parameters(V, E, H):
    """Task 1. Parameters of the word embedding plus the projection: V·H when E == H (no
    projection, BERT), else V·E for the table, E·H for the projection's weight, H for its bias."""
    ### BEGIN SOLUTION task 1
    return V * H if E == H else V * E + E * H + H
    ### END SOLUTION


class FactorizedEmbedding(Module):
    """Task 2. ids (B, T) -> (B, T, H): ``word_embeddings`` (an ``Embedding(V, E)``), then
    ``projection`` (a ``Linear(E, H)``) unless E == H, in which case ``projection`` is None.
    Name the two attributes exactly so."""

    def __init__(self, V, E, H):
        super().__init__()
        ### BEGIN SOLUTION task 2
        self.word_embeddings = Embedding(V, E)
        self.projection = Linear(E, H) if E != H else None
        ### END SOLUTION

    def forward(self, ids):
        ### BEGIN SOLUTION task 2
        x = self.word_embeddings(ids)                          # (B, T, E)
        return x if self.projection is None else self.projection(x)   # (B, T, H)
        ### END SOLUTION


def break_even_embedding_size(V, H):
    """Task 3. The largest E < H for which the factorized embedding has fewer parameters than
    BERT's V × H table (solve the inequality; no loop over E)."""
    ### BEGIN SOLUTION task 3
    # V E + E H + H < V H  <=>  E < (V H - H) / (V + H)
    bound = (V * H - H) // (V + H)
    return bound if bound * (V + H) < V * H - H else bound - 1
    ### END SOLUTION
