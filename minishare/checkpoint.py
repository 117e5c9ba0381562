"""Checkpoints: ``save(model, path)`` and ``load(path)``.

A checkpoint is one ``.npz`` file (NumPy's zip of arrays), readable with ``allow_pickle=False``, so
loading a file never runs code. It holds

* ``param/<name>``: each *distinct* parameter once, under the first name it is reached by;
* ``__meta__``: JSON text with the model class, its configuration and, for every other name of a
  shared tensor, the name it aliases;
* optionally ``train/...``: training state (optimizer, schedule, step, random generators) as
  arrays plus a JSON tree in the metadata, for exact resumption. A table (a list of rows of
  numbers, such as the history of a run) is stored as one array per column, so that the
  metadata's size does not grow with a run's length: its ceiling, ``MAX_META_BYTES``, is derived
  from the largest model the library builds (``sharing.MAX_LAYERS`` layers, every one distinct,
  with its optimizer state).

Loading does bounded work on any file, however edited or hostile: it reads the zip directory
first and refuses entries the format does not have and entries that would inflate beyond their
stored size, before decompressing anything; it checks the sizes the stored configuration implies
against the entries (a configuration edited to V = 10^10 is refused, not allocated); it reads
every array header before the array, refusing Python objects (never unpickled) and non-numbers.
Every problem raises ``CheckpointError`` naming the file. Then it builds the model from its
configuration, which recreates the sharing (the positions of a shared layer are one tensor again,
not copies), fills the weights and checks that the file's aliases are the model's. Files are written atomically: into a temporary file in the same folder,
flushed to disk, then renamed over the target, so a crash never leaves half a checkpoint.
"""
import json
import math
import os
import struct
import zipfile
import zlib

import numpy   # host-side file format: checkpoints are always NumPy arrays on disk

from minishare import backend, safeio
from minishare.checks import is_int
from minishare.errors import InvalidType, MinishareError
from minishare.files import atomic_write
from minishare.nn import init

# The JSON metadata: configuration, aliases, training-state tree. What grows in it is the names of
# the parameters (aliases, optimizer state), about 3,700 bytes a layer: the library's largest model,
# an encoder-decoder of sharing.MAX_LAYERS distinct layers each side, with its AdamW state, writes 30 MB
# (tests/test_checkpoint_limits.py). A run's history is stored as columns of arrays, outside it.
MAX_META_BYTES = 64 << 20

FORMAT = "minishare-checkpoint"
VERSION = 1


class CheckpointError(MinishareError, ValueError):
    """A checkpoint file that cannot be used; the message names the file and the problem."""


def _model_classes():
    from minishare import models
    return {cls.__name__: cls for cls in (models.AlbertForPreTraining, models.BertForPreTraining,
                                          models.AlbertModel, models.EncoderDecoderModel, models.DecoderLM)}


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
        raise InvalidType(f"save: {type(model).__name__} is not a minishare model with a configuration")
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
    with _Archive(path) as archive:
        meta = _meta(path, archive.read("__meta__", max_bytes=MAX_META_BYTES))
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
            with init.shape_only():              # shapes without memory, to check the sizes first
                shapes = {name: p.shape for name, p in classes[meta["model_class"]](config).named_parameters()}
        except (TypeError, ValueError) as err:
            raise CheckpointError(f"{path}: its configuration does not build a model: {err}") from None
        archive.expect({f"param/{name}" for name in shapes} | set(_array_keys(path, meta.get("train"))))
        for name, shape in shapes.items():
            archive.check_holds(f"param/{name}", shape, meta["config"])
        state = {name: archive.read(f"param/{name}", kind="f") for name in shapes}
        for name, array in state.items():
            if not numpy.isfinite(array).all():
                raise CheckpointError(f"{path}: the parameter {name} holds values that are not finite "
                                      "(NaN or inf); a model with them computes NaN")
        train = _decode(path, meta["train"], archive) if with_training_state and "train" in meta else None
    model = classes[meta["model_class"]](config)
    own_aliases = aliases(model)
    if own_aliases != meta["aliases"]:
        raise CheckpointError(f"{path}: the file's shared tensors do not match the sharing its "
                              "configuration builds (mismatched or edited checkpoint)")
    for name, p in model.named_parameters():      # keep the saved precision (e.g. float64)
        if state[name].dtype != p.dtype:
            p.data = p.data.astype(state[name].dtype)
    state.update({alias: state[target] for alias, target in own_aliases.items()})
    try:
        model.load_state_dict(state)
    except RuntimeError as err:
        raise CheckpointError(f"{path}: {err}") from None
    if not with_training_state:
        return model
    if "train" not in meta:
        raise CheckpointError(f"{path}: holds no training state (saved without one)")
    return model, train


class _Archive:
    """The entries of a checkpoint file, read only after their names and sizes were checked."""
    SLACK = 4096          # an .npy header, and deflate's overhead on incompressible data

    def __init__(self, path):
        self.path = path
        if not os.path.exists(path):
            raise FileNotFoundError(f"checkpoint {path} does not exist")
        size = safeio.regular_file(path, error=CheckpointError)
        try:
            self.zip = zipfile.ZipFile(path)
            infos = self.zip.infolist()
            self.entries = {info.filename[:-len(".npy")]: info for info in infos}
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as err:
            raise CheckpointError(f"{path}: not a checkpoint: not a .npz archive, or a truncated one "
                                  f"({type(err).__name__}: {err})") from None
        seen = set()
        for info in infos:                    # a zip may name an entry twice: which one is read?
            if info.filename in seen:
                raise CheckpointError(f"{path}: the entry {info.filename!r} is in the archive twice (edited or "
                                      "hostile file: a reader could take either)")
            seen.add(info.filename)
        if sum(info.compress_size for info in infos) > size:
            raise CheckpointError(f"{path}: its zip directory declares more stored bytes than the file's "
                                  f"{size:,} (truncated or edited file)")
        if "__meta__" not in self.entries:
            raise CheckpointError(f"{path}: not a minishare checkpoint (no __meta__ entry)")
        for key, info in self.entries.items():
            if not info.filename.endswith(".npy") or not (key == "__meta__" or key.startswith(("param/", "train/"))):
                raise CheckpointError(f"{path}: unexpected entry {info.filename!r:.80} (a checkpoint holds "
                                      "__meta__, param/... and train/... arrays only)")
            if info.file_size > 2 * info.compress_size + self.SLACK:
                raise CheckpointError(f"{path}: entry {key!r} would inflate from {info.compress_size:,} "
                                      f"to {info.file_size:,} bytes; refused (edited or hostile file)")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.zip.close()

    def expect(self, keys):
        """Refuse entries the model and training state have no place for (before reading them)."""
        for key in sorted(set(self.entries) - set(keys) - {"__meta__"}):
            raise CheckpointError(f"{self.path}: unexpected entry {key!r:.80} (no parameter or training "
                                  "state of that name; mismatched or edited checkpoint)")

    def check_holds(self, key, shape, config):
        """The entry exists and is large enough for ``shape`` (floats of at least 2 bytes), which
        the configuration ``config`` gives: a size edited there is caught before any allocation."""
        if key not in self.entries:
            raise CheckpointError(f"{self.path}: no entry {key!r} for the parameter {key[len('param/'):]}")
        if self.entries[key].file_size + self.SLACK < 2 * math.prod(shape):
            fields = ", ".join(f"{field}={value}" for field, value in config.items()
                               if is_int(value) and value in shape)
            raise CheckpointError(f"{self.path}: entry {key!r} holds {self.entries[key].file_size:,} bytes, too "
                                  f"few for the shape {tuple(shape)} that the configuration's {fields} give "
                                  "(edited configuration?)")

    def read(self, key, kind=None, max_bytes=None):
        """The array of entry ``key`` (numbers only; floats when ``kind="f"``), header checked first."""
        info = self.entries.get(key)
        if info is None:
            raise CheckpointError(f"{self.path}: no entry {key!r}")
        if max_bytes is not None and info.file_size > max_bytes:
            raise CheckpointError(f"{self.path}: entry {key!r} is {info.file_size:,} bytes, more than "
                                  f"the {max_bytes:,} allowed")
        try:
            with self.zip.open(info) as f:
                version = numpy.lib.format.read_magic(f)
                header = (numpy.lib.format.read_array_header_1_0 if version == (1, 0)
                          else numpy.lib.format.read_array_header_2_0)(f)
                dtype = header[2]
                if dtype.hasobject:
                    raise CheckpointError(f"{self.path}: entry {key!r} holds Python objects; a checkpoint "
                                          "holds numbers only, and objects are never loaded (unpickling "
                                          "could run code from the file)")
                if dtype.kind not in (kind or "biuf"):
                    raise CheckpointError(f"{self.path}: entry {key!r} has dtype {dtype}; expected "
                                          f"{'floating-point numbers' if kind == 'f' else 'numbers'}")
                declared = math.prod(header[0]) * dtype.itemsize     # Python ints: no overflow
                if declared > info.file_size:
                    raise CheckpointError(f"{self.path}: entry {key!r} declares shape {header[0]} of "
                                          f"{dtype} ({declared:,} bytes) but holds {info.file_size:,} "
                                          "bytes (truncated or edited file); refused before allocating")
            with self.zip.open(info) as f:
                return numpy.lib.format.read_array(f, allow_pickle=False)
        except CheckpointError:
            raise
        except (zipfile.BadZipFile, ValueError, OSError, EOFError, zlib.error, struct.error) as err:
            raise CheckpointError(f"{self.path}: entry {key!r} is truncated or corrupt "
                                  f"({type(err).__name__}: {err})") from None


def _write_atomically(path, arrays):
    with atomic_write(path, "wb") as f:
        numpy.savez(f, **arrays)


def _meta(path, array):
    """The JSON object stored as the bytes (a 1-D uint8 array) of the ``__meta__`` entry."""
    if array.dtype != numpy.uint8 or array.ndim != 1:
        raise CheckpointError(f"{path}: the __meta__ entry must be JSON text as a 1-D uint8 array, got "
                              f"dtype {array.dtype} and shape {array.shape} (corrupt metadata)")
    try:
        text = array.tobytes().decode()
    except UnicodeDecodeError as err:
        raise CheckpointError(f"{path}: corrupt metadata in __meta__ ({err})") from None
    meta = safeio.parse_json(text, f"{path}: its __meta__ entry", CheckpointError)
    if not isinstance(meta, dict):
        raise CheckpointError(f"{path}: the __meta__ entry must hold a JSON object, got "
                              f"{type(meta).__name__} (corrupt metadata)")
    if meta.get("format") != FORMAT or meta.get("version") != VERSION:
        raise CheckpointError(f"{path}: format {meta.get('format')!r} version {meta.get('version')!r}, "
                              f"expected {FORMAT!r} version {VERSION}")
    return meta


def _encode(obj, prefix, arrays):
    """A nested structure -> JSON-able tree; arrays move into ``arrays`` under a path key. Dict keys
    keep their type (an int key stays an int), which plain JSON would lose. A table (``_table``)
    becomes one array per column."""
    columns = _table(obj)
    if columns is not None:
        tree = []
        for i, (name, values, present) in enumerate(columns):
            arrays[f"{prefix}/{i}"] = values
            if present is not None:
                arrays[f"{prefix}/{i}.present"] = present
            tree.append([name, f"{prefix}/{i}", None if present is None else f"{prefix}/{i}.present"])
        return {"table": {"rows": len(obj), "columns": tree}}
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
    raise InvalidType(f"save: cannot store training-state value of type {type(obj).__name__} at {prefix}")


def _table(rows):
    """[(column name, values, present or None)] when ``rows`` is a non-empty list of dicts whose
    keys are strings and whose values are numbers, each column all ints (int64) or all floats
    (float64), so that the rows read back exactly; ``present`` (bool) marks the rows that have the
    column when some lack it. None for anything else."""
    if not isinstance(rows, list) or not rows or not all(isinstance(row, dict) for row in rows):
        return None
    names = list(dict.fromkeys(name for row in rows for name in row))
    columns = []
    for name in names:
        if not isinstance(name, str):
            return None
        cells = [row[name] for row in rows if name in row]
        kinds = {type(value) for value in cells}
        if kinds == {float}:
            values = numpy.array(cells, dtype=numpy.float64)
        elif kinds == {int} and all(-2**63 <= value < 2**63 for value in cells):
            values = numpy.array(cells, dtype=numpy.int64)
        else:
            return None
        present = None if len(cells) == len(rows) else numpy.array([name in row for row in rows])
        columns.append((name, values, present))
    return columns


def _array_keys(path, tree):
    """The ``train/...`` entries a training-state tree refers to (and a check of its structure)."""
    if tree is None or isinstance(tree, (bool, int, float, str)):
        return []
    if not isinstance(tree, dict) or len(tree) != 1:
        raise CheckpointError(f"{path}: malformed training state in the metadata ({tree!r:.80})")
    (kind, value), = tree.items()
    if kind == "array":
        if not isinstance(value, str) or not value.startswith("train/"):
            raise CheckpointError(f"{path}: malformed training state: array entry {value!r}")
        return [value]
    if kind == "dict" and isinstance(value, list) and all(isinstance(v, list) and len(v) == 2 for v in value):
        return [key for _, v in value for key in _array_keys(path, v)]
    if kind in ("list", "tuple") and isinstance(value, list):
        return [key for v in value for key in _array_keys(path, v)]
    if kind == "table" and isinstance(value, dict) and is_int(value.get("rows")) and value["rows"] > 0 \
            and isinstance(value.get("columns"), list) and all(
                isinstance(c, list) and len(c) == 3 and isinstance(c[0], str) and isinstance(c[1], str)
                and c[1].startswith("train/") and (c[2] is None or isinstance(c[2], str) and c[2].startswith("train/"))
                for c in value["columns"]):
        return [key for _, values, present in value["columns"] for key in (values, present) if key is not None]
    raise CheckpointError(f"{path}: malformed training state in the metadata (unknown {kind!r})")


def _decode_table(path, table, archive):
    """The rows of a table (``_table``) from its column arrays, each checked to hold one number for
    each row that has the column before the rows are made (the row count is the file's word)."""
    n, columns = table["rows"], []
    for name, key, present_key in table["columns"]:
        values = archive.read(key, kind="if")
        present = None if present_key is None else archive.read(present_key, kind="b")
        if values.ndim != 1 or (present.shape != (n,) or len(values) != int(present.sum())
                                if present is not None else len(values) != n):
            raise CheckpointError(f"{path}: malformed training state: the column {name!r} of a table of "
                                  f"{n:,} rows holds {values.shape} values"
                                  + ("" if present is None else f" for {present.shape} presence marks"))
        columns.append((name, values.tolist(), None if present is None else present.tolist()))
    if not columns:
        raise CheckpointError(f"{path}: malformed training state: a table without columns")
    rows = [{} for _ in range(n)]
    for name, values, present in columns:
        for row, value in zip(rows if present is None else (r for r, has in zip(rows, present) if has), values):
            row[name] = value
    return rows


def _decode(path, tree, archive):
    """The training state from its tree (checked by ``_array_keys``) and the archive's arrays."""
    if isinstance(tree, dict):
        (kind, value), = tree.items()
        if kind == "dict":
            try:
                return {k: _decode(path, v, archive) for k, v in value}
            except TypeError as err:            # an unhashable key
                raise CheckpointError(f"{path}: malformed training state ({err})") from None
        if kind == "array":
            if value not in archive.entries:
                raise CheckpointError(f"{path}: malformed training state: no entry {value!r}")
            return backend.asarray(archive.read(value))
        if kind == "table":
            return _decode_table(path, value, archive)
        items = [_decode(path, v, archive) for v in value]
        return tuple(items) if kind == "tuple" else items
    return tree
