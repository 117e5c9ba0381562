"""Weights in and out in Hugging Face's layout: a folder with ``config.json`` and ``model.safetensors``. ::

    model.save_pretrained("my-albert")                         # Hugging Face's names and config
    model = AlbertForPreTraining.from_pretrained("my-albert")  # also folders transformers wrote

What maps to what (each distinct minishare tensor is written once, under the name of its group)::

    minishare (AlbertForPreTraining)        Hugging Face AlbertForPreTraining (set s = group g, K = 1)
    albert.embeddings.*                     albert.embeddings.*
    albert.embeddings.                      albert.encoder.embedding_hidden_mapping_in
        embedding_hidden_mapping_in
    encoder.attention_sets.{s}.sublayer.q   albert.encoder.albert_layer_groups.{g}.albert_layers.0.
        /k/v/dense, .LayerNorm                  attention.{query,key,value,dense,LayerNorm}
    encoder.ffn_sets.{s}.sublayer.ffn,      ....albert_layers.0.ffn, .ffn_output,
        .ffn_output, .LayerNorm                 .full_layer_layer_norm
    albert.pooler                           albert.pooler
    predictions.dense, .LayerNorm           predictions.dense, .LayerNorm
    predictions.decoder.bias                predictions.bias (Hugging Face ties decoder.bias to it)
    predictions.decoder.weight              (tied: the word embeddings, not written)
    sop_classifier                          sop_classifier.classifier

    minishare, E = H, not shared            Hugging Face BertForPreTraining
    albert.embeddings.*                     bert.embeddings.*
    attention_sets.{i}: query/key/value,    bert.encoder.layer.{i}.attention.self.{query,key,value},
        dense, LayerNorm                        attention.output.dense, attention.output.LayerNorm
    ffn_sets.{i}: ffn, ffn_output,          bert.encoder.layer.{i}.intermediate.dense, output.dense,
        LayerNorm                               output.LayerNorm
    albert.pooler                           bert.pooler.dense
    predictions.dense, .LayerNorm           cls.predictions.transform.dense, .LayerNorm
    predictions.decoder.bias                cls.predictions.bias
    sop_classifier                          cls.seq_relationship

Sharing. Hugging Face's ALBERT shares whole layers (attention and FFN together) in consecutive
groups: position i of N runs group int(i / (N / G)), G = ``num_hidden_groups``, and each group runs
its ``inner_group_num`` = K layers in turn, so layer k of group g is distinct set g · K + k and the
model has N · K layer positions. All-shared (G = 1), not-shared (G = N) and Takase & Kiyono's
Sequence (G = M dividing N) have K = 1. Cycle with M dividing N is one group of K = M layers run
N / M times (A B A B: G = 1, K = 2, Hugging Face's num_hidden_layers = 2); its hidden states there
are the N / M + 1 states between groups, the function is the same. Cycle (rev) (A B B A) returns to
a set in an order no group repeats, Cycle with M not dividing N ends with a partial round, and
shared-attention and shared-FFN share one component and not the other: the layout holds none of
them, and saving one is refused with the reason. A folder with K > 1 loads as N · K positions
under an explicit schedule.

The E -> H projection. Hugging Face's ALBERT always has ``embedding_hidden_mapping_in``, even when
E = H; minishare, like Google's reference code, has none when E = H unless
``AlbertConfig.embedding_projection`` is True. An ALBERT folder with E = H therefore loads with
``embedding_projection=True`` and keeps its trained projection; a minishare ALBERT with E = H and
no projection is saved with an identity projection (weight I, bias 0): exactly the same function.

Reading. The ``safetensors`` package reads and writes the tensors (an optional dependency, imported
only here). PyTorch's ``pytorch_model.bin`` and other ``.bin``/``.pt`` files are pickles, which can
run code when loaded: they are refused, never opened. dtypes: a folder whose tensors are all
float64 loads as float64; float32, float16 and bfloat16 load as float32 (a widening, exact);
``dtype=`` chooses another. The buffers ``position_ids`` and ``token_type_ids`` that older
checkpoints carry are skipped (they are ``arange(P)`` and zeros, which the model builds itself), and
LayerNorm parameters named ``gamma`` and ``beta`` (checkpoints converted from TensorFlow) are read
as ``weight`` and ``bias``, as transformers does.

Hostile or damaged folders are refused with the file and the tensor named, never half-loaded:
files are read through ``minishare.safeio`` (regular files only, JSON bounded), an index's shards
must lie in the folder and hold each tensor once, a LayerNorm may not carry both names of one
parameter, and NaN or infinite weights, or float64 weights that would overflow float32, are
refused; so is an integer ``dtype=``.
"""
import json
import os

import numpy   # host-side file format: tensors are NumPy arrays on their way to and from disk

from minishare import backend, safeio
from minishare.files import atomic_write

CONFIG = "config.json"
WEIGHTS = "model.safetensors"
INDEX = "model.safetensors.index.json"
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")
MODEL_TYPES = ("albert", "bert")
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
_BUFFERS = ("embeddings.position_ids", "embeddings.token_type_ids")   # arange(P) and zeros
_HEADS = ("predictions.", "sop_classifier.", "cls.")


class HubError(ValueError):
    """A folder or a model that cannot go through the Hugging Face layout; the message says why."""


def _safetensors():
    try:
        import safetensors
        import safetensors.numpy
    except ImportError:
        raise ImportError("reading and writing Hugging Face weights needs the safetensors package: "
                          "pip install safetensors") from None
    return safetensors


class HubMixin:
    """``save_pretrained`` and ``from_pretrained`` for the ALBERT and BERT model classes.
    ``hub_model_type`` is the layout ``save_pretrained`` writes when not told otherwise."""
    hub_model_type = "albert"

    def save_pretrained(self, directory, model_type=None):
        """Write ``config.json`` and ``model.safetensors`` into ``directory`` in Hugging Face's
        layout: ``model_type`` "albert" or "bert" (default: the class's ``hub_model_type``).
        Returns ``directory``."""
        return save_pretrained(self, directory, model_type)

    @classmethod
    def from_pretrained(cls, directory, dtype=None):
        """This class's model from a folder in Hugging Face's layout (``model_type`` "albert" or
        "bert"), written by minishare or by transformers."""
        return from_pretrained(cls, directory, dtype)


# --- the layout: which plans it holds, and the configuration --------------------------------------
def albert_groups(config):
    """(N, G, K): Hugging Face's ``num_hidden_layers``, ``num_hidden_groups`` and
    ``inner_group_num`` that express ``config``'s encoder, or HubError saying why none do."""
    _check_post_ln(config, "ALBERT")
    plan = config.plan()
    attention, ffn = plan.schedule("attention"), plan.schedule("ffn")
    if attention != ffn:
        raise HubError(f"Hugging Face's ALBERT shares whole layers, attention and FFN together; the plan "
                       f"{plan.name} shares them apart (attention {_letters(attention)}, FFN "
                       f"{_letters(ffn)}), which its layout cannot hold")
    L = len(attention)
    for K in (k for k in range(1, L + 1) if L % k == 0):
        N, n_sets = L // K, plan.n_sets("attention")
        if n_sets % K == 0 and _hf_schedule(N, n_sets // K, K) == attention:
            return N, n_sets // K, K
    raise HubError(f"Hugging Face's ALBERT shares whole layers in consecutive groups of N/G positions "
                   f"(position i uses group int(i / (N/G)), G = num_hidden_groups); the plan {plan.name} "
                   f"({_letters(attention)}) {_why_not_groups(attention)}, which no num_hidden_groups "
                   "expresses")


def bert_refusal(config):
    """Why ``config`` is not a BERT (E = H, no projection, each layer its own parameters, Post-LN),
    or None when it is one."""
    try:
        _check_post_ln(config, "BERT")
    except HubError as error:
        return str(error)
    plan = config.plan()
    if config.embedding_size != config.hidden_size:
        return (f"BERT embeds tokens in H directly (E = H); this model has E = {config.embedding_size}, "
                f"H = {config.hidden_size}: save it as model_type='albert'")
    if config.has_embedding_projection:
        return ("BERT has no E -> H projection, and this model has one (embedding_projection=True): "
                "save it as model_type='albert'")
    own = tuple(range(plan.n_layers))
    if plan.schedule("attention") != own or plan.schedule("ffn") != own:
        return (f"BERT gives every layer its own parameters; the plan {plan.name} shares them "
                f"({plan}): save it as model_type='albert' if it shares in consecutive groups")
    return None


def _check_post_ln(config, name):
    if config.norm_position != "post":
        raise HubError(f"Hugging Face's {name} is Post-LN (LayerNorm after each residual sum); this model "
                       f"is norm_position={config.norm_position!r}, a different function")
    if config.timestep_signal:
        raise HubError(f"Hugging Face's {name} has no place for the Universal Transformer's timestep "
                       "signal that this model adds before every layer")


def _hf_schedule(N, G, K):
    """The set each of the N · K layers uses in Hugging Face's ALBERT (AlbertTransformer.forward:
    group int(i / (N / G)) at position i, then that group's K inner layers in turn)."""
    return tuple(int(i / (N / G)) * K + k for i in range(N) for k in range(K))


def _letters(schedule):
    from minishare.sharing import label as _label
    return " ".join(_label(s) for s in schedule)


def _why_not_groups(schedule):
    """The first place a schedule leaves consecutive equal groups."""
    from minishare.sharing import label as _label
    for i in range(1, len(schedule)):
        if schedule[i] != schedule[i - 1] and schedule[i] in schedule[:i]:
            return f"returns to set {_label(schedule[i])} at position {i} after other sets"
    sizes = [schedule.count(s) for s in range(max(schedule) + 1)]
    return f"has groups of sizes {', '.join(map(str, sizes))}, where Hugging Face's groups are equal"


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
    from minishare.models.config import AlbertConfig
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
        from minishare.sharing import MAX_LAYERS
        N, G, K = (safeio.integer(hf[field], f"{where}: {field}", high=MAX_LAYERS, error=HubError)
                   for field in ("num_hidden_layers", "num_hidden_groups", "inner_group_num"))
        if N * K > MAX_LAYERS:           # checked before the schedule of N · K positions is built
            raise HubError(f"{where}: num_hidden_layers × inner_group_num = {N} × {K} layer positions; "
                           f"at most {MAX_LAYERS:,} (sharing.MAX_LAYERS)")
        schedule = _hf_schedule(N, G, K)
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


# --- names ----------------------------------------------------------------------------------------
def _pair(hf, ms, bias=True):
    return {f"{hf}.weight": f"{ms}.weight", **({f"{hf}.bias": f"{ms}.bias"} if bias else {})}


def name_map(config, model_type, heads=True):
    """({Hugging Face name: minishare name}, {optional Hugging Face name: the name it must equal}).
    The optional names are the tied copies some files carry (the decoder's weight and bias). With
    ``heads`` False the names are those of the base model (``AlbertModel``, ``BertModel``): no
    heads and no "albert."/"bert." prefix. Without the E -> H projection in an ALBERT layout, the
    projection's names map to None (``save_pretrained`` writes the identity)."""
    top, emb = ("albert", "albert.embeddings") if model_type == "albert" else ("bert", "bert.embeddings")
    names = {f"{emb}.{part}.weight": f"albert.embeddings.{part}.weight"
             for part in ("word_embeddings", "position_embeddings", "token_type_embeddings")}
    names.update(_pair(f"{emb}.LayerNorm", "albert.embeddings.LayerNorm"))
    if model_type == "albert":
        projection = _pair("albert.encoder.embedding_hidden_mapping_in",
                           "albert.embeddings.embedding_hidden_mapping_in")
        names.update(projection if config.has_embedding_projection else dict.fromkeys(projection))
        N, G, K = albert_groups(config)
        layers = [(f"albert.encoder.albert_layer_groups.{s // K}.albert_layers.{s % K}", s)
                  for s in range(G * K)]
        parts = {"attention.query": "attention.query", "attention.key": "attention.key",
                 "attention.value": "attention.value", "attention.dense": "attention.dense",
                 "attention.LayerNorm": "attention.LayerNorm", "ffn": "ffn.ffn",
                 "ffn_output": "ffn.ffn_output", "full_layer_layer_norm": "ffn.LayerNorm"}
        head = {"albert.pooler": "albert.pooler", "predictions.dense": "predictions.dense",
                "predictions.LayerNorm": "predictions.LayerNorm",
                "sop_classifier.classifier": "sop_classifier"}
        bias, decoder = "predictions.bias", "predictions.decoder"
    else:
        layers = [(f"bert.encoder.layer.{i}", i) for i in range(config.num_hidden_layers)]
        parts = {"attention.self.query": "attention.query", "attention.self.key": "attention.key",
                 "attention.self.value": "attention.value", "attention.output.dense": "attention.dense",
                 "attention.output.LayerNorm": "attention.LayerNorm", "intermediate.dense": "ffn.ffn",
                 "output.dense": "ffn.ffn_output", "output.LayerNorm": "ffn.LayerNorm"}
        head = {"bert.pooler.dense": "albert.pooler", "cls.predictions.transform.dense": "predictions.dense",
                "cls.predictions.transform.LayerNorm": "predictions.LayerNorm",
                "cls.seq_relationship": "sop_classifier"}
        bias, decoder = "cls.predictions.bias", "cls.predictions.decoder"
    for hf, s in layers:
        for hf_part, ms_part in parts.items():
            component, sub = ms_part.split(".", 1)
            ms = (f"albert.encoder.{component}_sets.{s}." + ("LayerNorm" if sub == "LayerNorm"
                                                             else f"sublayer.{sub}"))
            names.update(_pair(f"{hf}.{hf_part}", ms))
    for hf, ms in head.items():
        names.update(_pair(hf, ms))
    if config.tie_word_embeddings:   # Hugging Face ties decoder.bias to predictions.bias
        names[bias] = "predictions.decoder.bias"
        optional = {f"{decoder}.bias": bias, f"{decoder}.weight": f"{emb}.word_embeddings.weight"}
    else:                            # untied, Hugging Face's decoder uses its own bias and
        names.update(_pair(decoder, "predictions.decoder"))    # predictions.bias goes unused
        optional = {bias: f"{decoder}.bias"}
    if heads:
        return names, optional
    return {hf[len(top) + 1:]: (ms if ms is None else ms[len("albert."):])     # AlbertModel's names
            for hf, ms in names.items() if not hf.startswith(_HEADS)}, {}


# --- writing --------------------------------------------------------------------------------------
def save_pretrained(model, directory, model_type=None):
    """See ``HubMixin.save_pretrained``. The tensors are written first, then config.json, each
    file atomically (``minishare.files.atomic_write``)."""
    from minishare.models.albert import AlbertForPreTraining, AlbertModel
    if not isinstance(model, (AlbertModel, AlbertForPreTraining)):
        raise TypeError(f"save_pretrained needs an ALBERT or BERT model, got {type(model).__name__}")
    model_type = model_type or type(model).hub_model_type
    if model_type not in MODEL_TYPES:
        raise HubError(f"save_pretrained: model_type must be one of {', '.join(MODEL_TYPES)}, got {model_type!r}")
    config, heads = model.config, isinstance(model, AlbertForPreTraining)
    if model_type == "bert" and bert_refusal(config):
        raise HubError(f"cannot save as Hugging Face's BERT: {bert_refusal(config)}")
    safetensors = _safetensors()
    names, _ = name_map(config, model_type, heads)
    params = dict(model.named_parameters(remove_duplicate=False))
    word = params[("albert." if heads else "") + "embeddings.word_embeddings.weight"]
    dtype = numpy.dtype(word.dtype)
    tensors, H = {}, config.hidden_size
    for hf, ms in names.items():
        if ms is None:        # ALBERT layout, E = H, no projection: the identity, the same function
            tensors[hf] = numpy.eye(H, dtype=dtype) if hf.endswith("weight") else numpy.zeros(H, dtype)
        else:
            tensors[hf] = numpy.ascontiguousarray(backend.to_numpy(params[ms].data))
    if heads and not config.tie_word_embeddings:   # Hugging Face's unused predictions.bias: the same
        bias = "predictions.bias" if model_type == "albert" else "cls.predictions.bias"
        tensors[bias] = tensors[bias.replace("bias", "decoder.bias")].copy()
    os.makedirs(directory, exist_ok=True)
    data = safetensors.numpy.save(tensors, metadata={"format": "pt"})
    with atomic_write(os.path.join(directory, WEIGHTS), "wb") as f:
        f.write(data)
    text = json.dumps(hf_config(config, model_type, heads, dtype.name), indent=2, sort_keys=True)
    with atomic_write(os.path.join(directory, CONFIG)) as f:
        f.write(text + "\n")
    return directory


# --- reading --------------------------------------------------------------------------------------
def from_pretrained(cls, directory, dtype=None):
    """See ``HubMixin.from_pretrained``."""
    from minishare.models.albert import AlbertForPreTraining
    from minishare.nn import init
    directory = os.fspath(directory)
    _refuse_pickle(directory)
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"from_pretrained: no folder {directory}")
    if dtype is not None and numpy.dtype(dtype).kind != "f":
        raise HubError(f"from_pretrained: dtype must be a floating-point type (numpy.float32, "
                       f"numpy.float64), got {numpy.dtype(dtype)}: weights cast to it would be truncated")
    config_path = os.path.join(directory, CONFIG)
    if not os.path.lexists(config_path):
        raise FileNotFoundError(f"from_pretrained: {directory} has no {CONFIG}")
    hf = safeio.load_json(config_path, error=HubError)
    if not isinstance(hf, dict):
        raise HubError(f"{config_path}: holds {type(hf).__name__}, not a JSON object")
    config, model_type = minishare_config(hf, config_path)
    heads = issubclass(cls, AlbertForPreTraining)
    names, optional = name_map(config, model_type, heads)
    try:
        with init.shape_only():          # the shapes the configuration implies, without memory
            shapes = {name: tuple(p.shape) for name, p in cls(config).named_parameters()}
    except ValueError as error:          # e.g. a BertForPreTraining asked to hold an ALBERT
        raise HubError(f"{directory}: {cls.__name__} cannot hold this {model_type}: {error}") from None
    entries = _entries(directory)                      # name -> (file, dtype, shape), no data read
    entries = _match_prefix(entries, names, model_type, heads, directory)
    _check_entries(entries, names, optional, shapes, directory)
    if dtype is None:
        dtype = numpy.float64 if all(e[1] == "F64" for e in entries.values()) else numpy.float32
    arrays = _read(entries, dtype)
    for alias, target in optional.items():    # untied, Hugging Face never reads predictions.bias
        if config.tie_word_embeddings and alias in arrays and not numpy.array_equal(arrays[alias], arrays[target]):
            raise HubError(f"{directory}: {alias} differs from {target}, to which config.json ties it "
                           "(tie_word_embeddings=true)")
    state = {ms: arrays[hf] for hf, ms in names.items()}
    model = cls(config).to(dtype)
    for alias_names in model.shared_names().values():   # the tied decoder: the word embeddings
        state.update({alias: state[alias_names[0]] for alias in alias_names[1:]})
    return model.load_state_dict(state)


def _refuse_pickle(path):
    """One line for PyTorch pickles, given as a file or as the only weights of a folder."""
    if os.path.isdir(path):
        if os.path.exists(os.path.join(path, WEIGHTS)) or os.path.exists(os.path.join(path, INDEX)):
            return
        pickles = sorted(f for f in os.listdir(path) if f.endswith(PICKLE_SUFFIXES))
        if not pickles:
            return
        where, name = path, pickles[0]
    elif path.endswith(PICKLE_SUFFIXES):
        where, name = os.path.dirname(path) or ".", os.path.basename(path)
    else:
        return
    raise HubError(f"{os.path.join(where, name)} is a PyTorch pickle, which minishare never opens "
                   f"(unpickling can run code); convert it once with transformers: "
                   f"AutoModelForPreTraining.from_pretrained({where!r}).save_pretrained({where!r}, "
                   "safe_serialization=True)")


def _entries(directory):
    """{tensor name: (file, safetensors dtype, shape)} from the files' headers alone (the name
    stored in the file is appended by ``_match_prefix``)."""
    safetensors = _safetensors()
    weights, index = os.path.join(directory, WEIGHTS), os.path.join(directory, INDEX)
    if os.path.lexists(weights):
        files = [weights]
    elif os.path.lexists(index):
        files = _shards(directory, index)
    else:
        raise FileNotFoundError(f"from_pretrained: {directory} has no {WEIGHTS} (nor {INDEX})")
    entries = {}
    for path in files:
        safeio.regular_file(path, error=HubError)
        try:
            with safetensors.safe_open(path, framework="numpy") as f:
                for name in f.keys():
                    if name in entries:
                        raise HubError(f"{directory}: the tensor {name} is in two shards, "
                                       f"{os.path.basename(entries[name][0])} and {os.path.basename(path)}; "
                                       "which one is meant cannot be told (edited or damaged index)")
                    piece = f.get_slice(name)
                    entries[name] = (path, piece.get_dtype(), tuple(piece.get_shape()))
        except (OSError, safetensors.SafetensorError) as error:
            raise HubError(f"{path}: not a readable safetensors file ({error})") from None
    return entries


def _shards(directory, index):
    """The shard files a ``model.safetensors.index.json`` names, each inside ``directory``."""
    weight_map = safeio.load_json(index, error=HubError)
    weight_map = weight_map.get("weight_map") if isinstance(weight_map, dict) else None
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        raise HubError(f"{index}: not a safetensors index (a JSON object whose weight_map maps "
                       "tensor names to shard file names)")
    files = sorted(set(weight_map.values()))
    for name in files:   # by name: a shard may be a symlink (Hugging Face's cache links to its blobs)
        if os.path.isabs(name) or os.pardir in os.path.normpath(name).split(os.sep):
            raise HubError(f"{index}: the shard {name!r} is outside the folder {directory}; an index "
                           "names shards in its own folder only")
    return [os.path.join(directory, name) for name in files]


def _match_prefix(entries, names, model_type, heads, directory):
    """Names as ``names`` spells them: a base-model file ("embeddings....") read into a model with
    heads is refused; a file with heads read into a base model drops the prefix and the heads."""
    renamed = {}
    for name, e in entries.items():
        if not name.endswith(_BUFFERS):
            if _renamed(name) in renamed:
                both = " and ".join(sorted((name, renamed[_renamed(name)][-1])))
                raise HubError(f"{directory}: holds both {both}, two "
                               "names of one LayerNorm parameter (TensorFlow's and PyTorch's); which one "
                               "is meant cannot be told")
            renamed[_renamed(name)] = (*e, name)
    entries = renamed
    top = f"{model_type}."
    prefixed = any(name.startswith(top) for name in entries)
    if heads and not prefixed:
        raise HubError(f"{directory}: holds a base {model_type} model without the pre-training heads; "
                       f"load it with AlbertModel.from_pretrained (the encoder alone)")
    if not heads and prefixed:
        entries = {name[len(top):]: e for name, e in entries.items()
                   if name.startswith(top) or not name.startswith(_HEADS)}
    return entries


def _renamed(name):
    """Checkpoints converted from TensorFlow name LayerNorm's gain and shift gamma and beta
    (Google's BERT, and files on the Hugging Face hub that kept those names); transformers renames
    them on load, and so does this."""
    for old, new in ((".gamma", ".weight"), (".beta", ".bias")):
        if name.endswith(old) and "LayerNorm" in name:
            return name[: -len(old)] + new
    return name


def _check_entries(entries, names, optional, shapes, directory):
    """Every expected tensor present, none unexpected, each of the configuration's shape and a
    floating-point dtype; all problems reported together."""
    problems = []
    missing = sorted(name for name in names if name not in entries)
    unexpected = sorted(name for name in entries if name not in names and name not in optional)
    if missing:
        hint = (" (the folder lacks pre-training heads: AlbertModel.from_pretrained reads the encoder "
                "alone)" if all(name.startswith(_HEADS) for name in missing) else "")
        problems.append("missing " + ", ".join(missing) + hint)
    if unexpected:
        problems.append("unexpected " + ", ".join(unexpected))
    expected = dict(names)
    expected.update({alias: names[target] for alias, target in optional.items()})
    for name, (path, kind, shape, _) in sorted(entries.items()):
        ms = expected.get(name)
        if name in expected:
            if ms is not None and shape != shapes[ms]:
                problems.append(f"{name} has shape {shape}, but config.json implies {shapes[ms]}")
            if kind not in ("F16", "BF16", "F32", "F64"):
                problems.append(f"{name} has dtype {kind}; weights must be floating-point")
    if problems:
        raise HubError(f"{directory}: the weights do not fit config.json: " + "; ".join(problems))


def _read(entries, dtype):
    """The arrays (host, ``dtype``). bfloat16 is float32's upper half, so it widens by a shift."""
    safetensors = _safetensors()
    arrays, by_file = {}, {}
    for name, (path, kind, _, stored) in entries.items():
        by_file.setdefault(path, []).append((name, kind, stored))
    for path, items in by_file.items():
        if any(kind == "BF16" for _, kind, _ in items):
            with open(path, "rb") as f:
                raw = dict(safetensors.deserialize(f.read()))
        with safetensors.safe_open(path, framework="numpy") as f:
            for name, kind, stored in items:
                if kind == "BF16":
                    half = numpy.frombuffer(raw[stored]["data"], dtype="<u2").reshape(raw[stored]["shape"])
                    array = (half.astype(numpy.uint32) << 16).view(numpy.float32)
                else:
                    array = f.get_tensor(stored)
                arrays[name] = _cast(array, dtype, stored, path)
    return arrays


def _cast(array, dtype, name, path):
    """``array`` as ``dtype``; NaN or infinite weights, and values the cast would turn into
    infinities (float64 beyond float32's range), are refused naming the tensor."""
    if not numpy.isfinite(array).all():
        raise HubError(f"{path}: the tensor {name} holds values that are not finite (NaN or inf); "
                       "a model with them computes NaN")
    with numpy.errstate(over="ignore"):             # the overflow is reported below, by name
        cast = array.astype(dtype)
    if not numpy.isfinite(cast).all():
        raise HubError(f"{path}: the tensor {name} holds values up to {numpy.abs(array).max():.3g}, "
                       f"beyond {numpy.dtype(dtype).name}'s range; loading it as {numpy.dtype(dtype).name} "
                       "would make them inf (load with dtype=numpy.float64)")
    return cast
