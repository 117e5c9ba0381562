"""Input embeddings, with ALBERT's factorized embedding parameterization (Lan et al., 2019, Sec. 3.1).

BERT embeds each of V tokens directly in the hidden size: a V × H table. ALBERT embeds in a small
E and projects to H: V × E + E × H parameters, far fewer when E ≪ H (V = 30,000, H = 4096, E = 128:
123M -> 4.4M). With E = H there is no projection and the embedding is exactly BERT's, as in
Google's reference code (modeling.py of google-research/albert applies
``embedding_hidden_mapping_in`` only when the embedding width differs from H). Hugging Face's
``AlbertTransformer`` always builds that Linear(E, H), so with E = H it keeps an H × H projection
and counts H² + H more parameters; the E = 768 rows of Tables 3 and 4 here count BERT's embedding,
as Google's code does. ``AlbertConfig.embedding_projection=True`` keeps the projection when
E = H, so a Hugging Face ALBERT with E = H loads with the function it was trained with.
"""
import math

from minishare import backend
from minishare.nn import Dropout, Embedding, LayerNorm, Linear, Module


class AlbertEmbeddings(Module):
    """word (V × E) + position (P × E) + token type (2 × E), LayerNorm over E, dropout, then the
    E -> H projection (by default absent when E = H; ``config.has_embedding_projection``).
    input_ids (B, T) -> (B, T, H)."""

    def __init__(self, config):
        super().__init__()
        E, H = config.embedding_size, config.hidden_size
        self.word_embeddings = Embedding(config.vocab_size, E)
        self.position_embeddings = Embedding(config.max_position_embeddings, E)
        self.token_type_embeddings = Embedding(config.type_vocab_size, E)
        self.LayerNorm = LayerNorm(E, eps=config.layer_norm_eps)
        self.dropout = Dropout(config.hidden_dropout_prob)
        self.embedding_hidden_mapping_in = Linear(E, H) if config.has_embedding_projection else None

    def forward(self, input_ids, token_type_ids=None):
        B, T = input_ids.shape
        if T > self.position_embeddings.num_embeddings:
            raise ValueError(f"sequence length {T} exceeds max_position_embeddings="
                             f"{self.position_embeddings.num_embeddings}")
        xp = backend.xp
        if token_type_ids is None:
            token_type_ids = xp.zeros((B, T), dtype=xp.int64)
        x = (self.word_embeddings(input_ids)                            # (B, T, E)
             + self.position_embeddings(xp.arange(T))                   # (T, E), broadcast
             + self.token_type_embeddings(token_type_ids))              # (B, T, E)
        x = self.dropout(self.LayerNorm(x))
        if self.embedding_hidden_mapping_in is not None:
            x = self.embedding_hidden_mapping_in(x)                     # (B, T, H)
        return x


def sinusoidal_positions(T, H, dtype):
    """Vaswani et al. (2017, Sec. 3.5): PE[p, 2i] = sin(p / 10000^(2i/H)), PE[p, 2i+1] = cos(...).
    Fixed, so no parameters. -> (T, H)."""
    xp = backend.xp
    angles = xp.arange(T)[:, None] / 10000.0 ** (xp.arange(0, H, 2) / H)   # (T, H/2)
    pe = xp.zeros((T, H), dtype=dtype)
    pe[:, 0::2] = xp.sin(angles)
    pe[:, 1::2] = xp.cos(angles[:, : H // 2])
    return pe


class TokenEmbeddings(Module):
    """For the encoder-decoder and the LM: word embeddings (V × E) scaled by √H, projected E -> H
    when factorized, plus sinusoidal positions. ids (B, T) -> (B, T, H)."""

    def __init__(self, config):
        super().__init__()
        E, H = config.embedding_size, config.hidden_size
        self.hidden_size, self.max_positions = H, config.max_position_embeddings
        self.word_embeddings = Embedding(config.vocab_size, E)
        self.embedding_hidden_mapping_in = Linear(E, H) if E != H else None
        self.dropout = Dropout(config.hidden_dropout_prob)

    def forward(self, input_ids):
        B, T = input_ids.shape
        if T > self.max_positions:
            raise ValueError(f"sequence length {T} exceeds max_position_embeddings={self.max_positions}")
        x = self.word_embeddings(input_ids) * math.sqrt(self.hidden_size)    # (B, T, E)
        if self.embedding_hidden_mapping_in is not None:
            x = self.embedding_hidden_mapping_in(x)                           # (B, T, H)
        return self.dropout(x + sinusoidal_positions(T, self.hidden_size, x.dtype))
