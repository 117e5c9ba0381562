"""Checkpoints: ``save(model, path)`` and ``load(path)``.

A checkpoint is one ``.npz`` file (NumPy's zip of arrays), readable with ``allow_pickle=False``, so
loading a file never runs code. It holds

* ``param/<name>``: each *distinct* parameter once, under the first name it is reached by;
* ``__meta__``: JSON text with the model class, its configuration and, for every other name of a
  shared tensor, the name it aliases;
* optionally ``train/...``: training state (optimizer, schedule, step, random generators) as
  arrays plus a JSON tree in the metadata, for exact resumption.

Loading builds the model from its configuration, which recreates the sharing (the positions of a
shared layer are one tensor again, not copies), then fills the weights and checks that the file's
aliases are the model's. Files are written atomically: into a temporary file in the same folder,
flushed to disk, then renamed over the target, so a crash never leaves half a checkpoint.
"""
import io
import json
import os
import zipfile

import numpy   # host-side file format: checkpoints are always NumPy arrays on disk

from minishare import backend
from minishare.files import atomic_write

FORMAT = "minishare-checkpoint"
VERSION = 1


class CheckpointError(ValueError):
    """A checkpoint file that cannot be used; the message names the file and the problem."""


def _model_classes():
    from minishare import models
    return {cls.__name__: cls for cls in (models.AlbertForPreTraining, models.AlbertModel,
                                          models.EncoderDecoderModel, models.DecoderLM)}


def aliases(model):
    """{name: the first name of the same tensor} for every name but the first of each shared
    tensor (named_parameters() yields each tensor once, under its first name)."""
    result = {}
    for first, names in model.shared_names().items():
        result.update({name: first for name in names[1:]})
    return result


def save(model, path, training_state=None):
    """Write ``model`` (weights and configuration) and optionally ``training_state`` (a nested
    dict of numbers, strings, lists and arrays, e.g. from ``Trainer.state_dict()``) to ``path``."""
    if type(model).__name__ not in _model_classes():
        raise TypeError(f"save: {type(model).__name__} is not a minishare model with a configuration")
    arrays = {f"param/{name}": backend.to_numpy(p.data) for name, p in model.named_parameters()}
    meta = {"format": FORMAT, "version": VERSION, "model_class": type(model).__name__,
            "config_class": type(model.config).__name__, "config": model.config.to_dict(),
            "aliases": aliases(model)}
    if training_state is not None:
        meta["train"] = _encode(training_state, "train", arrays)
    arrays["__meta__"] = numpy.frombuffer(json.dumps(meta).encode(), dtype=numpy.uint8)
    _write_atomically(path, arrays)
    return path


def load(path, with_training_state=False):
    """Rebuild the model saved at ``path`` (and, if asked, return ``(model, training_state)``)."""
    from minishare import models
    files = _read(path)
    meta = _meta(path, files)
    classes = _model_classes()
    if meta.get("model_class") not in classes:
        raise CheckpointError(f"{path}: unknown model class {meta.get('model_class')!r}")
    config_class = {cls.__name__: cls for cls in (models.AlbertConfig, models.TransformerConfig)
                    }.get(meta.get("config_class"))
    if config_class is None or not isinstance(meta.get("config"), dict) \
            or not isinstance(meta.get("aliases"), dict):
        raise CheckpointError(f"{path}: its metadata lacks a known config_class, a config or the "
                              "aliases (edited or damaged checkpoint)")
    try:
        config = config_class(**meta["config"])
        model = classes[meta["model_class"]](config)
    except (TypeError, ValueError) as err:
        raise CheckpointError(f"{path}: its configuration does not build a model: {err}") from None

    own_aliases = aliases(model)
    if own_aliases != meta["aliases"]:
        raise CheckpointError(f"{path}: the file's shared tensors do not match the sharing its "
                              "configuration builds (mismatched or edited checkpoint)")
    # every stored tensor, so that one the model has no place for is reported, not dropped
    state = {key[len("param/"):]: value for key, value in files.items() if key.startswith("param/")}
    state.update({alias: state[target] for alias, target in own_aliases.items() if target in state})
    for name, p in model.named_parameters():      # keep the saved precision (e.g. float64)
        saved = state.get(name)
        if saved is not None and saved.dtype.kind == "f" and saved.dtype != p.dtype:
            p.data = p.data.astype(saved.dtype)
    try:
        model.load_state_dict(state)
    except RuntimeError as err:
        raise CheckpointError(f"{path}: {err}") from None
    if not with_training_state:
        return model
    if "train" not in meta:
        raise CheckpointError(f"{path}: holds no training state (saved without one)")
    return model, _decode(meta["train"], files)


def _write_atomically(path, arrays):
    with atomic_write(path, "wb") as f:
        numpy.savez(f, **arrays)


def _read(path):
    if not os.path.exists(path):
        raise FileNotFoundError(f"checkpoint {path} does not exist")
    try:
        with open(path, "rb") as f:
            raw = f.read()
        with numpy.load(io.BytesIO(raw), allow_pickle=False) as npz:
            return {key: npz[key] for key in npz.files}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError) as err:
        raise CheckpointError(f"{path}: truncated or corrupt checkpoint ({type(err).__name__}: {err})") from None


def _meta(path, files):
    if "__meta__" not in files:
        raise CheckpointError(f"{path}: not a minishare checkpoint (no __meta__ entry)")
    try:
        meta = json.loads(files["__meta__"].tobytes().decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CheckpointError(f"{path}: corrupt metadata ({err})") from None
    if meta.get("format") != FORMAT or meta.get("version") != VERSION:
        raise CheckpointError(f"{path}: format {meta.get('format')!r} version {meta.get('version')!r}, "
                              f"expected {FORMAT!r} version {VERSION}")
    return meta


def _encode(obj, prefix, arrays):
    """A nested structure -> JSON-able tree; arrays move into ``arrays`` under a path key. Dict keys
    keep their type (an int key stays an int), which plain JSON would lose."""
    if isinstance(obj, dict):
        return {"dict": [[k, _encode(v, f"{prefix}/{k}", arrays)] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        return {type(obj).__name__: [_encode(v, f"{prefix}/{i}", arrays) for i, v in enumerate(obj)]}
    if isinstance(obj, numpy.ndarray) or backend.is_array(obj):
        arrays[prefix] = backend.to_numpy(obj)
        return {"array": prefix}
    if isinstance(obj, numpy.generic):
        return obj.item()
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(f"save: cannot store training-state value of type {type(obj).__name__} at {prefix}")


def _decode(tree, files):
    if isinstance(tree, dict):
        (kind, value), = tree.items()
        if kind == "dict":
            return {k: _decode(v, files) for k, v in value}
        if kind == "array":
            return backend.asarray(files[value])
        items = [_decode(v, files) for v in value]
        return tuple(items) if kind == "tuple" else items
    return tree
