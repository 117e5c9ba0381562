"""Counting parameters: each distinct tensor once.

Counting a model walks ``model.parameters()``, which yields a shared tensor once (by identity): the
count is what is stored and trained, not what is computed with. Full-size presets are counted by
building the real model under ``nn.init.shape_only()``, so the same tensors are counted (no
separate formula that could drift from the code) without allocating their memory.

Where the parameters go (per group and part) and the papers' tables are measurements, in the lab:
``minishare.analysis.params``.
"""
from minishare.nn import Module, init


def count_parameters(model_or_config):
    """Number of trainable numbers, each shared tensor counted once. Accepts a Module, or a config
    (AlbertConfig: the encoder with its pooler, as the papers count; TransformerConfig: the
    encoder-decoder), which is then built shape-only."""
    model = model_or_config if isinstance(model_or_config, Module) else build_shape_only(model_or_config)
    return sum(p.size for p in model.parameters())


def build_shape_only(config):
    """The model a config describes, built under ``init.shape_only()`` (no array allocated):
    ``AlbertModel`` for an AlbertConfig, ``EncoderDecoderModel`` for a TransformerConfig."""
    from minishare.models import AlbertConfig, AlbertModel, EncoderDecoderModel, TransformerConfig
    with init.shape_only():
        if isinstance(config, AlbertConfig):
            return AlbertModel(config)
        if isinstance(config, TransformerConfig):
            return EncoderDecoderModel(config)
    raise TypeError(f"count_parameters needs a Module, AlbertConfig or TransformerConfig, got "
                    f"{type(config).__name__}")
