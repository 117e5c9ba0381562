"""BERT (Devlin et al., 2019) for pre-training: ALBERT's code with E = H, no E -> H projection and
every layer its own parameters, Post-LN.

How a user chooses the layout a BERT-shaped model is saved in: ``save_pretrained`` writes the
layout of the model's class unless told otherwise. ``BertForPreTraining`` writes Hugging Face's
``BertForPreTraining`` (``model_type="bert"``); ``AlbertForPreTraining`` writes ALBERT's, whatever
its shape, and ``save_pretrained(DIR, model_type="bert")`` writes a BERT-shaped one as BERT. Both
classes read both layouts; ``BertForPreTraining`` refuses a configuration that is not a BERT.
"""
from minishare.models.albert import AlbertForPreTraining
from minishare.models.config import AlbertConfig
from minishare.models.hub import bert_refusal


class BertForPreTraining(AlbertForPreTraining):
    """``AlbertForPreTraining`` restricted to BERT's shape (``AlbertConfig.from_preset("bert-base")``):
    the same modules and parameter names, MLM head and next-sentence (here: ``sop_classifier``)
    head; ``save_pretrained`` writes Hugging Face's ``BertForPreTraining``."""
    hub_model_type = "bert"

    def __init__(self, config):
        if not isinstance(config, AlbertConfig):
            raise TypeError(f"BertForPreTraining needs an AlbertConfig, got {type(config).__name__}")
        reason = bert_refusal(config)
        if reason:
            raise ValueError(f"BertForPreTraining: not a BERT: {reason}")
        super().__init__(config)
