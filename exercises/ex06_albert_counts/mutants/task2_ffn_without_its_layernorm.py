"""Counts the FFN's two dense layers but forgets the LayerNorm after it, which the paper files
under the FFN component."""


def ffn_set_parameters(config):
    H, I = config.hidden_size, config.intermediate_size
    return H * I + I + I * H + H
