"""The rules of a run folder (``run_training``'s ``out``), checked before anything is written.

A run folder holds ``config.json`` (the arguments of the run and the model's configuration),
``tokenizer.json``, ``checkpoint.npz`` and ``history.csv``. A new run never lands on top of an
existing one by accident; a resumed run must be the same run (model, data, optimizer, seed), and
only its length and bookkeeping (``MAY_CHANGE_ON_RESUME``) may differ.

While a run uses its folder it holds the folder's lock, ``.lock`` (a file holding its pid and
host, created exclusively): a second run into the folder, with or without ``--overwrite`` or
``--resume``, is refused while the first lives; a lock whose process is gone (same host, no such
pid) is stale and taken over, and so is an empty one that has stayed empty for seconds (its run
died between creating it and writing it). The checkpoint records what it belongs to (``identity``: the run's
arguments, the dtype it trains in, and digests of the model configuration, of tokenizer.json and
of the data: the corpus's documents, or a toy task's held-out examples and first batch), so that a
checkpoint copied from another run, an edited config.json or tokenizer.json, or a corpus file
changed since, is refused on resume, naming both sides.
"""
import contextlib
import hashlib
import json
import math
import os
import socket
import tempfile
import time

from minishare import safeio
from minishare.checks import is_int, is_real
from minishare.errors import InvalidValue, MinishareError
from minishare.run.errors import BadArgument, RunInUse

RUN_FILES = ("config.json", "tokenizer.json", "checkpoint.npz", "history.csv")
LOCK = ".lock"
MAY_CHANGE_ON_RESUME = ("steps", "eval_every", "save_every")
# run_training's keywords that config.json records as the run's "arguments"
ARGUMENTS = ("task", "preset", "overrides", "objective", "corpus", "vocab_size", "seq_len", "steps",
             "batch_size", "lr", "optimizer", "eval_every", "seed", "warmup_steps", "save_every")


# Ceilings of a run's sizes, checked before anything is built: past them a run would spend its
# time or memory before the first step (a batch is drawn example by example; the history keeps a
# row of about 1 KB a step in memory; the embedding holds V rows), or could never end.
LIMITS = {"steps": 10**7, "batch_size": 1 << 16, "seq_len": 1 << 16, "vocab_size": 1 << 18,
          "warmup_steps": 10**7}
MAX_BATCH_TOKENS = 1 << 22    # batch_size x seq_len: every layer keeps (B, T, H) activations


def check_arguments(arguments):
    """Refuse, by name, a number no run can use (``arguments``: run_training's keywords), or one
    past its ceiling (``LIMITS``), naming the limit."""
    for name in ("vocab_size", "seq_len", "steps", "batch_size", "eval_every", "save_every"):
        value = arguments[name]
        if not is_int(value) or value < 1:
            raise BadArgument(name, "must be a positive integer", value)
        if name in LIMITS and value > LIMITS[name]:
            raise BadArgument(name, f"must be at most {LIMITS[name]:,}", value)
    tokens = arguments["batch_size"] * arguments["seq_len"]
    if tokens > MAX_BATCH_TOKENS:
        raise BadArgument("batch_size", f"times seq_len ({arguments['seq_len']:,}) is {tokens:,} tokens a "
                          f"step, more than the {MAX_BATCH_TOKENS:,} allowed", arguments["batch_size"])
    seed = arguments["seed"]
    if not is_int(seed) or seed < 0:
        raise BadArgument("seed", "must be an integer >= 0", seed)
    lr = arguments["lr"]
    if not is_real(lr) or not (math.isfinite(lr) and lr > 0):
        raise BadArgument("lr", "must be a positive finite number", lr)
    warmup = arguments["warmup_steps"]
    if not is_int(warmup) or warmup < 0:
        raise BadArgument("warmup_steps", "must be an integer >= 0", warmup)
    if warmup > LIMITS["warmup_steps"]:
        raise BadArgument("warmup_steps", f"must be at most {LIMITS['warmup_steps']:,}", warmup)


def tokenizer_limit(vocab_size):
    """The most bytes a tokenizer.json of ``vocab_size`` pieces written by minishare can hold: each
    piece at most ``data.tokenizer.MAX_PIECE_CHARS`` characters of at most 6 bytes of JSON
    (``\\u001f``), once in the vocabulary and twice in the merges; checked before a resumed run
    reads the file (an edited one of nested lists would fill the memory)."""
    from minishare.data.tokenizer import MAX_PIECE_CHARS
    return 4096 + vocab_size * 3 * (6 * MAX_PIECE_CHARS + 8)


def existing_run(out):
    """The run files already in ``out`` (an empty list for a new or empty folder)."""
    return [name for name in RUN_FILES if os.path.exists(os.path.join(out, name))]


def saved_run(out):
    """The settings of the run in ``out`` (its config.json): ``arguments`` (run_training's
    keywords, each checked) and ``model`` (the model's configuration)."""
    checkpoint = os.path.join(out, "checkpoint.npz")
    if not os.path.exists(checkpoint):
        raise FileNotFoundError(f"cannot resume: {checkpoint} does not exist")
    path = os.path.join(out, "config.json")
    try:
        settings = safeio.load_json(path)
        if not isinstance(settings, dict) or not isinstance(settings.get("arguments"), dict) \
                or not isinstance(settings.get("model"), dict):
            raise InvalidValue("its arguments and model must be JSON objects")
        arguments = settings["arguments"]
        missing = [name for name in ARGUMENTS if name not in arguments]
        unknown = sorted(set(arguments) - set(ARGUMENTS))
        if missing or unknown:
            raise InvalidValue("; ".join([f"missing argument {name}" for name in missing]
                                         + [f"unknown argument {name}" for name in unknown]))
        if not isinstance(arguments["overrides"], dict):
            raise InvalidValue(f"the argument overrides must be a JSON object of model fields, got "
                               f"{arguments['overrides']!r:.60}")
        check_arguments(arguments)
        return settings
    except (OSError, MinishareError) as err:     # safeio's messages name the file already
        message = str(err) if isinstance(err, OSError) else err.args[0]
        raise InvalidValue(f"cannot resume: {message if path in message else f'{path}: {message}'}") from None


def resume_conflicts(saved, requested):
    """[(argument, requested value, saved value)] for every argument of ``requested`` (keywords
    of run_training) that may not change on resume and differs from the run ``saved``
    (``saved_run``). Model fields of ``overrides`` count one by one (``overrides.hidden_size``),
    against the configuration the run's model was built with."""
    conflicts, arguments = [], saved["arguments"]
    for name in sorted(requested):
        if name in MAY_CHANGE_ON_RESUME:
            continue
        old, new = arguments.get(name), requested.get(name)
        if name == "overrides":
            conflicts += [(f"overrides.{field}", value, saved["model"].get(field))
                          for field, value in sorted((new or {}).items())
                          if _json(value) != _json(saved["model"].get(field))]
        elif _json(new) != _json(old):
            conflicts.append((name, new, old))
    return conflicts


def check_writable(out):
    """Make ``out`` and prove a file can be created there, before any training time is spent."""
    try:
        os.makedirs(out, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as err:
        raise OSError(f"{out}: cannot write the run there ({err.strerror or err})") from None


def clear(out, run_files=True):
    """Remove the temporary files a killed save left in ``out`` and, with ``run_files``, the
    files of the earlier run there."""
    for name in os.listdir(out):
        stale_tmp = name.startswith(".") and name.endswith(".tmp") and \
            any(name.startswith(f".{run_file}.") for run_file in RUN_FILES)
        if stale_tmp or (run_files and name in RUN_FILES):
            os.remove(os.path.join(out, name))


def _json(value):
    """A value as config.json stores it (a tuple reads back as a list)."""
    return json.loads(json.dumps(value, default=str))


@contextlib.contextmanager
def locked(out):
    """Hold the lock of the run folder ``out`` for the block (making the folder, and removing it
    again afterwards if it is still empty); ``RunInUse`` if another live run holds it."""
    created = not os.path.isdir(out)
    check_writable(out)
    path = os.path.join(out, LOCK)
    while True:
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            break
        except FileExistsError:
            owner = _lock_owner(path)
            if not _stale(owner) and not _abandoned(path):
                who = (f"pid {owner['pid']} on host {owner['host']}" if owner else
                       "an unreadable owner")
                raise RunInUse(f"{out} is in use by another run ({who}; lock file {path}): wait for it "
                               "to end, or remove the lock file if that run is gone") from None
            with contextlib.suppress(FileNotFoundError):   # stale: its owner is gone
                os.remove(path)
    try:                # written inside: a lock left empty by a full disk is removed with the rest
        with os.fdopen(fd, "w") as f:
            json.dump({"pid": os.getpid(), "host": socket.gethostname()}, f)
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)
        if created:
            with contextlib.suppress(OSError):          # only if nothing was written there
                os.rmdir(out)


def _abandoned(path, seconds=10):
    """True for an empty lock file older than ``seconds``: a run that created it died before it
    could write its pid (killed, or a full disk, in an older minishare); one being written now
    is younger."""
    try:
        info = os.stat(path)
    except OSError:
        return False
    return info.st_size == 0 and time.time() - info.st_mtime > seconds


def _lock_owner(path):
    """{"pid", "host"} from a lock file, or None if it cannot be read as one."""
    try:
        owner = safeio.load_json(path, limit=4096)
    except (OSError, InvalidValue):
        return None
    if isinstance(owner, dict) and isinstance(owner.get("host"), str) \
            and is_int(owner.get("pid")) and owner["pid"] > 0:
        return owner
    return None


def _stale(owner):
    """True when the lock's process is known to be gone: this host, and no process of that pid."""
    if owner is None or owner["host"] != socket.gethostname():
        return False                  # unreadable (being written?) or another machine's: in use
    try:
        os.kill(owner["pid"], 0)
    except ProcessLookupError:
        return True
    except PermissionError:           # alive, another user's
        return False
    return False


def data_digest(data):
    """SHA-256 of a run's data as JSON (the corpus's documents, or a toy task's examples; arrays
    as lists): the same data gives the same digest on any machine."""
    text = json.dumps(data, default=lambda value: value.tolist(), separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def identity(arguments, model, tokenizer_path, data, dtype):
    """What a checkpoint belongs to: the run's arguments that may not change on resume, the dtype
    of its parameters, SHA-256 digests of the model configuration and of the tokenizer file (None
    without one), and ``data``, the data's digest (``data_digest``)."""
    tokenizer = None
    if tokenizer_path is not None:
        with open(tokenizer_path, "rb") as f:
            tokenizer = hashlib.sha256(f.read()).hexdigest()
    return {"arguments": _json({k: v for k, v in arguments.items() if k not in MAY_CHANGE_ON_RESUME}),
            "model": hashlib.sha256(json.dumps(_json(model), sort_keys=True).encode()).hexdigest(),
            "tokenizer": tokenizer, "data": data, "dtype": str(dtype)}


def identity_conflicts(recorded, expected):
    """["what (the checkpoint's value, the folder's value)"] where a checkpoint's recorded
    ``identity`` differs from the run folder's; a checkpoint without one conflicts wholly."""
    if not isinstance(recorded, dict) or not set(recorded) <= set(expected) or "arguments" not in recorded:
        return ["it records no run identity (saved by another program or an older minishare)"]
    if set(recorded) != set(expected):
        return [f"it records no {' or '.join(sorted(set(expected) - set(recorded)))} (saved by an older "
                "minishare, which did not record them): train the run again with --overwrite"]
    conflicts = []
    old, new = recorded["arguments"], expected["arguments"]
    if not isinstance(old, dict):
        return ["its recorded arguments are not a JSON object"]
    for name in sorted(set(old) | set(new)):
        if old.get(name) != new.get(name):
            conflicts.append(f"{name}={old.get(name)!r} (config.json: {new.get(name)!r})")
    for part, file, why in (("model", "config.json's model", ""), ("tokenizer", "tokenizer.json", ""),
                            ("data", "the data now", ": the corpus or the task's data changed since the run "
                             "was trained (restore it, or train again with --overwrite)")):
        if recorded[part] != expected[part]:
            conflicts.append(f"{part} digest {str(recorded[part])[:12]} ({file}: {str(expected[part])[:12]}){why}")
    if recorded["dtype"] != expected["dtype"]:
        conflicts.append(f"dtype {recorded['dtype']!r:.20} (the run trains in {expected['dtype']})")
    return conflicts
