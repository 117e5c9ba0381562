"""Asks the plan for the attention's number of sets and uses it for the FFN too: right whenever
both components follow one schedule (every named Takase plan, all-shared, not-shared), wrong for
shared-attention, shared-FFN and explicit schedules."""


def albert_parameters(config, pad_vocab_to=1):
    plan, H = config.plan(), config.hidden_size
    sets = plan.n_sets("attention")
    final_norm = 2 * H if config.norm_position == "pre" else 0
    return (embedding_parameters(config, pad_vocab_to)                     # noqa: F821
            + sets * (attention_set_parameters(config) + ffn_set_parameters(config))   # noqa: F821
            + final_norm + H * H + H)
