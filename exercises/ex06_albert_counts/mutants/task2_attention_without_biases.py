"""Counts the four H × H projections of attention without their biases (4 H² + LayerNorm)."""


def attention_set_parameters(config):
    H = config.hidden_size
    return 4 * H * H + 2 * H
