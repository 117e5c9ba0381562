"""The rules of a run folder (``run_training``'s ``out``), checked before anything is written.

A run folder holds ``config.json`` (the arguments of the run and the model's configuration),
``tokenizer.json``, ``checkpoint.npz`` and ``history.csv``. A new run never lands on top of an
existing one by accident; a resumed run must be the same run (model, data, optimizer, seed), and
only its length and bookkeeping (``MAY_CHANGE_ON_RESUME``) may differ.
"""
import json
import math
import os
import tempfile

from minishare.checks import is_int, is_real

RUN_FILES = ("config.json", "tokenizer.json", "checkpoint.npz", "history.csv")
MAY_CHANGE_ON_RESUME = ("steps", "eval_every", "save_every")
DEFAULT_SAVE_EVERY = 50


class BadArgument(ValueError):
    """An argument outside its range; ``.name`` is the argument, so the CLI can name its flag."""

    def __init__(self, name, rule, value):
        super().__init__(f"{name} {rule}, got {value!r}")
        self.name, self.rule, self.value = name, rule, value


class TrainingInterrupted(Exception):
    """SIGINT or SIGTERM stopped ``run_training``, which saved its checkpoint and history first."""

    def __init__(self, signal, step, out):
        super().__init__(f"interrupted by {signal.name} after step {step}: checkpoint and history "
                         f"saved in {out}")
        self.signal, self.step, self.out = signal, step, out


class TrainingDiverged(FloatingPointError):
    """The loss (or gradient) stopped being finite; the last good checkpoint was kept."""


def check_arguments(arguments):
    """Refuse, by name, a number no run can use (``arguments``: run_training's keywords)."""
    for name in ("vocab_size", "seq_len", "steps", "batch_size", "eval_every", "save_every"):
        value = arguments[name]
        if not is_int(value) or value < 1:
            raise BadArgument(name, "must be a positive integer", value)
    seed = arguments["seed"]
    if not is_int(seed) or seed < 0:
        raise BadArgument("seed", "must be an integer >= 0", seed)
    lr = arguments["lr"]
    if not is_real(lr) or not (math.isfinite(lr) and lr > 0):
        raise BadArgument("lr", "must be a positive finite number", lr)


def existing_run(out):
    """The run files already in ``out`` (an empty list for a new or empty folder)."""
    return [name for name in RUN_FILES if os.path.exists(os.path.join(out, name))]


def saved_run(out):
    """The settings of the run in ``out`` (its config.json): ``arguments`` (run_training's
    keywords) and ``model`` (the model's configuration)."""
    checkpoint = os.path.join(out, "checkpoint.npz")
    if not os.path.exists(checkpoint):
        raise FileNotFoundError(f"cannot resume: {checkpoint} does not exist")
    try:
        with open(os.path.join(out, "config.json"), encoding="utf-8") as f:
            settings = json.load(f)
        if not isinstance(settings["arguments"], dict) or not isinstance(settings["model"], dict):
            raise TypeError("arguments and model must be JSON objects")
        return settings
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"cannot resume: {os.path.join(out, 'config.json')} does not record the "
                         f"run's arguments ({type(err).__name__}: {err})") from None


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
