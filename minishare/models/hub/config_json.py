"""``config.json`` in Hugging Face's fields, to and from ``AlbertConfig``.

Fields a file leaves out take Hugging Face's defaults (``HF_DEFAULTS``, those of transformers'
``AlbertConfig()`` and ``BertConfig()``). An ALBERT's groups (``num_hidden_groups`` G,
``inner_group_num`` K, ``minishare.models.hub.layout``) become the named plan they express where
there is one (all-shared, not-shared, Sequence), else an explicit schedule. An ALBERT with E = H
loads with ``embedding_projection=True``: Hugging Face's ALBERT always has the E -> H projection,
so a trained one is kept.
"""
from minishare import safeio
from minishare.models.config import AlbertConfig
from minishare.models.hub.layout import MODEL_TYPES, HubError, albert_groups, hf_schedule
from minishare.sharing import MAX_LAYERS

ARCHITECTURES = {("albert", True): "AlbertForPreTraining", ("albert", False): "AlbertModel",
                 ("bert", True): "BertForPreTraining", ("bert", False): "BertModel"}
# Hugging Face's activation names -> minishare's (``minishare.nn.transformer.ACTIVATIONS``); "gelu"
# is the exact erf form in both, "gelu_new" and "gelu_pytorch_tanh" the tanh approximation.
ACTIVATIONS = {"gelu": "gelu", "gelu_new": "gelu_new", "gelu_pytorch_tanh": "gelu_new",
               "relu": "relu", "tanh": "tanh"}
# Hugging Face's defaults for fields a config.json may leave out (AlbertConfig(), BertConfig()).
HF_DEFAULTS = {
    "albert": dict(vocab_size=30000, embedding_size=128, hidden_size=4096, num_hidden_layers=12,
                   num_hidden_groups=1, num_attention_heads=64, intermediate_size=16384,
                   inner_group_num=1, hidden_act="gelu_new", hidden_dropout_prob=0.0,
                   attention_probs_dropout_prob=0.0, max_position_embeddings=512, type_vocab_size=2,
                   initializer_range=0.02, layer_norm_eps=1e-12, tie_word_embeddings=True),
    "bert": dict(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                 intermediate_size=3072, hidden_act="gelu", hidden_dropout_prob=0.1,
                 attention_probs_dropout_prob=0.1, max_position_embeddings=512, type_vocab_size=2,
                 initializer_range=0.02, layer_norm_eps=1e-12, tie_word_embeddings=True),
}
_COPIED_FIELDS = ("vocab_size", "hidden_size", "num_attention_heads", "intermediate_size",
                  "max_position_embeddings", "type_vocab_size", "layer_norm_eps", "hidden_dropout_prob",
                  "attention_probs_dropout_prob", "initializer_range", "tie_word_embeddings")


def hf_config(config, model_type, heads=True, dtype="float32"):
    """The ``config.json`` dictionary for ``config`` in ``model_type``'s layout."""
    out = {field: getattr(config, field) for field in _COPIED_FIELDS}
    out.update(model_type=model_type, architectures=[ARCHITECTURES[model_type, heads]],
               hidden_act=config.hidden_act, position_embedding_type="absolute", pad_token_id=0,
               dtype=dtype)
    if model_type == "albert":
        N, G, K = albert_groups(config)
        out.update(embedding_size=config.embedding_size, num_hidden_layers=N, num_hidden_groups=G,
                   inner_group_num=K, classifier_dropout_prob=config.hidden_dropout_prob)
    else:
        out.update(num_hidden_layers=config.num_hidden_layers, is_decoder=False,
                   add_cross_attention=False, classifier_dropout=None)
    return out


def minishare_config(hf, where):
    """(AlbertConfig, model_type) from a ``config.json`` dictionary ``hf``."""
    model_type = hf.get("model_type")
    if model_type not in MODEL_TYPES:
        raise HubError(f"{where}: model_type {model_type!r} is not one minishare reads "
                       f"({', '.join(MODEL_TYPES)})")
    hf = {**HF_DEFAULTS[model_type], **hf}
    if hf.get("position_embedding_type", "absolute") != "absolute":
        raise HubError(f"{where}: position_embedding_type {hf['position_embedding_type']!r}; minishare's "
                       "models learn absolute positions only")
    if hf.get("is_decoder") or hf.get("add_cross_attention"):
        raise HubError(f"{where}: a decoder (is_decoder / add_cross_attention); minishare reads encoders")
    if not isinstance(hf["hidden_act"], str) or hf["hidden_act"] not in ACTIVATIONS:
        raise HubError(f"{where}: hidden_act {hf['hidden_act']!r} has no minishare op (known: "
                       f"{', '.join(ACTIVATIONS)})")
    fields = {field: hf[field] for field in _COPIED_FIELDS}
    fields["hidden_act"] = ACTIVATIONS[hf["hidden_act"]]
    if model_type == "bert":
        fields.update(embedding_size=hf["hidden_size"], num_hidden_layers=hf["num_hidden_layers"],
                      sharing="not-shared")
    else:
        N, G, K = (safeio.integer(hf[field], f"{where}: {field}", high=MAX_LAYERS, error=HubError)
                   for field in ("num_hidden_layers", "num_hidden_groups", "inner_group_num"))
        if N * K > MAX_LAYERS:           # checked before the schedule of N · K positions is built
            raise HubError(f"{where}: num_hidden_layers × inner_group_num = {N} × {K} layer positions; "
                           f"at most {MAX_LAYERS:,} (sharing.MAX_LAYERS)")
        schedule = hf_schedule(N, G, K)
        if len(set(schedule)) != G * K:
            raise HubError(f"{where}: num_hidden_groups={G} with num_hidden_layers={N} leaves groups "
                           "that no layer uses")
        fields.update(embedding_size=hf["embedding_size"], num_hidden_layers=N * K,
                      **_sharing(N, G, K, schedule),
                      embedding_projection=True if hf["embedding_size"] == hf["hidden_size"] else None)
    try:
        return AlbertConfig(**fields), model_type
    except (TypeError, ValueError) as error:
        raise HubError(f"{where}: {error}") from None


def _sharing(N, G, K, schedule):
    """The named plan for Hugging Face's groups where one exists, else the explicit schedule."""
    if K == 1 and G == 1:
        return {"sharing": "all-shared"}
    if K == 1 and G == N:
        return {"sharing": "not-shared"}
    if K == 1 and N % G == 0:
        return {"sharing": "sequence", "num_unique_layers": G}   # i // (N/M): Takase & Kiyono
    return {"sharing": list(schedule)}
