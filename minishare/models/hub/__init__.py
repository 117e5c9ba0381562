"""Weights in and out in Hugging Face's layout: a folder with ``config.json`` and ``model.safetensors``. ::

    model.save_pretrained("my-albert")                         # Hugging Face's names and config
    model = AlbertForPreTraining.from_pretrained("my-albert")  # also folders transformers wrote

One concern a module::

    layout        which models the layouts hold: ALBERT's groups (N, G, K) for a sharing plan, the
                  schedule they run, why a plan or a BERT does not fit (``HubError``)
    names         which Hugging Face tensor name holds which minishare tensor (the full table)
    config_json   config.json's fields to and from ``AlbertConfig``, Hugging Face's defaults
    io            safetensors files: ``save_pretrained``, ``from_pretrained`` and the checks that
                  refuse a pickle or a damaged folder; ``HubMixin`` gives the model classes both

The model classes depend on this package (they inherit ``HubMixin``), never the other way round:
it knows a model by the attributes ``HubMixin`` declares.
"""
from minishare.models.hub.config_json import HF_DEFAULTS, hf_config, minishare_config
from minishare.models.hub.io import HubMixin, from_pretrained, save_pretrained
from minishare.models.hub.layout import HubError, albert_groups, bert_refusal
from minishare.models.hub.names import name_map
