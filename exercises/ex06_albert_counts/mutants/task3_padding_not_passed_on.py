"""Takes ``pad_vocab_to`` but does not pass it to the embedding count: the whole model is
counted with the unpadded table."""


def albert_parameters(config, pad_vocab_to=1):
    plan, H = config.plan(), config.hidden_size
    final_norm = 2 * H if config.norm_position == "pre" else 0
    return (embedding_parameters(config)                                   # noqa: F821
            + plan.n_sets("attention") * attention_set_parameters(config)  # noqa: F821
            + plan.n_sets("ffn") * ffn_set_parameters(config)              # noqa: F821
            + final_norm + H * H + H)
