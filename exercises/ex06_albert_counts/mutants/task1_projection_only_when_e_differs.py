"""Decides the projection by E != H alone, as Google's code does by default, and so misses a
configuration that keeps it when E = H (embedding_projection=True, Hugging Face's layout)."""


def embedding_parameters(config, pad_vocab_to=1):
    V, E, H = config.vocab_size, config.embedding_size, config.hidden_size
    V = -(-V // pad_vocab_to) * pad_vocab_to
    tables = (V + config.max_position_embeddings + config.type_vocab_size) * E
    projection = E * H + H if E != H else 0
    return tables + 2 * E + projection
