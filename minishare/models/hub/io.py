"""Weights in and out of a folder in Hugging Face's layout: ``config.json`` and ``model.safetensors``.

``save_pretrained`` writes the tensors under Hugging Face's names (``minishare.models.hub.names``)
and the configuration in its fields (``config_json``), for models whose plan the layout holds
(``layout``); ``from_pretrained`` reads folders minishare or transformers wrote.

Reading. The ``safetensors`` package reads and writes the tensors (an optional dependency, imported
only here). PyTorch's ``pytorch_model.bin`` and other ``.bin``/``.pt`` files are pickles, which can
run code when loaded: they are refused, never opened. dtypes: a folder whose tensors are all
float64 loads as float64; float32, float16 and bfloat16 load as float32 (a widening, exact);
``dtype=`` chooses another.

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
from minishare.errors import MissingPackage
from minishare.files import atomic_write
from minishare.models.hub.config_json import hf_config, minishare_config
from minishare.models.hub.layout import MODEL_TYPES, HubError, bert_refusal
from minishare.models.hub.names import HEADS, match_prefix, name_map, some
from minishare.nn import init

CONFIG = "config.json"
WEIGHTS = "model.safetensors"
INDEX = "model.safetensors.index.json"
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")


def _safetensors():
    try:
        import safetensors
        import safetensors.numpy
    except ImportError:
        raise MissingPackage("reading and writing Hugging Face weights needs the safetensors package: "
                          "pip install safetensors") from None
    return safetensors


class HubMixin:
    """``save_pretrained`` and ``from_pretrained`` for the ALBERT and BERT model classes.
    ``hub_model_type`` is the layout ``save_pretrained`` writes when not told otherwise;
    ``hub_heads`` says whether the class carries the pre-training heads (``AlbertForPreTraining``'s
    names, under "albert.") or is the base model (``AlbertModel``'s)."""
    hub_model_type = "albert"
    hub_heads = False

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


# --- writing --------------------------------------------------------------------------------------
def save_pretrained(model, directory, model_type=None):
    """See ``HubMixin.save_pretrained``. The tensors are written first, then config.json, each
    file atomically (``minishare.files.atomic_write``)."""
    if not isinstance(model, HubMixin):
        raise TypeError(f"save_pretrained needs an ALBERT or BERT model, got {type(model).__name__}")
    model_type = model_type or type(model).hub_model_type
    if model_type not in MODEL_TYPES:
        raise HubError(f"save_pretrained: model_type must be one of {', '.join(MODEL_TYPES)}, got {model_type!r}")
    config, heads = model.config, model.hub_heads
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
    heads = cls.hub_heads
    names, optional = name_map(config, model_type, heads)
    try:
        with init.shape_only():          # the shapes the configuration implies, without memory
            shapes = {name: tuple(p.shape) for name, p in cls(config).named_parameters()}
    except ValueError as error:          # e.g. a BertForPreTraining asked to hold an ALBERT
        raise HubError(f"{directory}: {cls.__name__} cannot hold this {model_type}: {error}") from None
    entries = _entries(directory)                      # name -> (file, dtype, shape), no data read
    entries = match_prefix(entries, names, model_type, heads, directory)
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
    stored in the file is appended by ``names.match_prefix``)."""
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


def _check_entries(entries, names, optional, shapes, directory):
    """Every expected tensor present, none unexpected, each of the configuration's shape and a
    floating-point dtype; all problems reported together."""
    problems = []
    missing = sorted(name for name in names if name not in entries)
    unexpected = sorted(name for name in entries if name not in names and name not in optional)
    if missing:
        hint = (" (the folder lacks pre-training heads: AlbertModel.from_pretrained reads the encoder "
                "alone)" if all(name.startswith(HEADS) for name in missing) else "")
        problems.append("missing " + some(missing) + hint)
    if unexpected:
        problems.append("unexpected " + some(unexpected))
    expected = dict(names)
    expected.update({alias: names[target] for alias, target in optional.items()})
    wrong = []
    for name, (path, kind, shape, _) in sorted(entries.items()):
        ms = expected.get(name)
        if name in expected:
            if ms is not None and shape != shapes[ms]:
                wrong.append(f"{name} has shape {shape}, but config.json implies {shapes[ms]}")
            if kind not in ("F16", "BF16", "F32", "F64"):
                wrong.append(f"{name} has dtype {kind}; weights must be floating-point")
    if wrong:
        problems.append(some(wrong, "; "))
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
