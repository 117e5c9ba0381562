"""Forgets Pre-LN's final LayerNorm (2 H): the tables are all Post-LN, so they never show it."""


def albert_parameters(config, pad_vocab_to=1):
    plan, H = config.plan(), config.hidden_size
    return (embedding_parameters(config, pad_vocab_to)                     # noqa: F821
            + plan.n_sets("attention") * attention_set_parameters(config)  # noqa: F821
            + plan.n_sets("ffn") * ffn_set_parameters(config)              # noqa: F821
            + H * H + H)
