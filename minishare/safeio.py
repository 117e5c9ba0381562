"""Reading what others wrote: the one place where files from disk and numbers from a file or the
command line are checked, before anything is allocated or waited on.

- ``regular_file``: only regular files are read. A FIFO would block the reader forever, a device
  (``/dev/zero``, also behind a symlink) would never end; both are refused, naming the path.
- ``read_bytes`` / ``load_json``: a file is read only up to a stated ceiling, checked from its size
  before reading. JSON is parsed with a depth limit (Python's parser would recurse until a bare
  ``RecursionError``) and a digit limit on integers (Python's own stops at 4,300 digits with a
  message about ``sys.set_int_max_str_digits``); every refusal names the file.
- ``integer`` / ``number``: a field's type and range, checked in one line naming the field and the
  accepted range (``True`` is not a number here, "0.1" is not a float).

Each function raises ``error`` (``minishare.errors.InvalidValue``, a ValueError, unless told
otherwise, e.g. ``HubError`` or ``CheckpointError``) so that callers keep their own exception types.
"""
import json
import math
import os
import re
import stat

from minishare.checks import is_int, is_real
from minishare.errors import InvalidValue

MAX_JSON_BYTES = 64 << 20   # config.json files, a run's config.json, tokenizer.json, checkpoint metadata
MAX_JSON_DEPTH = 64         # deeper than any file minishare or Hugging Face writes (they nest 2 to 5)
MAX_INT_DIGITS = 100        # an integer in a configuration or tokenizer file never needs more

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


def regular_file(path, error=InvalidValue):
    """The size in bytes of ``path`` if it is a regular file (or a symlink to one);
    FileNotFoundError if it does not exist; ``error`` naming the path and what it is otherwise."""
    try:
        mode, size = (lambda s: (s.st_mode, s.st_size))(os.stat(path))
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file") from None
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        link = f" (a symlink to {os.path.realpath(path)})" if os.path.islink(path) else ""
        raise error(f"{path} is {kind}{link}, not a regular file; minishare reads regular files only "
                    "(a FIFO or a device could block or never end)")
    return size


def read_bytes(path, limit, error=InvalidValue):
    """The content of the regular file ``path``, refused before reading if over ``limit`` bytes."""
    size = regular_file(path, error)
    if size > limit:
        raise error(f"{path} is {size:,} bytes, more than the {limit:,} allowed for this file")
    with open(path, "rb") as f:
        content = f.read(limit + 1)        # the file may have grown since: never read past limit
    if len(content) > limit:
        raise error(f"{path} is more than the {limit:,} bytes allowed for this file")
    return content


def load_json(path, limit=MAX_JSON_BYTES, error=InvalidValue):
    """The JSON value in the file ``path`` (UTF-8), with the limits of ``parse_json``."""
    content = read_bytes(path, limit, error)
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise error(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    return parse_json(text, path, error)


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKET = re.compile(r"[\[\]{}]")


def parse_json(text, where, error=InvalidValue):
    """``json.loads(text)``, refusing nesting deeper than ``MAX_JSON_DEPTH`` and integers longer
    than ``MAX_INT_DIGITS`` digits; ``where`` (the file) starts every message."""
    depth = 0
    for bracket in _BRACKET.finditer(_STRING.sub("", text)):    # brackets outside strings
        depth += 1 if bracket.group() in "[{" else -1
        if depth > MAX_JSON_DEPTH:
            raise error(f"{where}: JSON nested deeper than {MAX_JSON_DEPTH} levels; refused "
                        "(no minishare or Hugging Face file nests more than a few)")

    def bounded_int(digits):
        if len(digits.lstrip("-")) > MAX_INT_DIGITS:
            raise error(f"{where}: an integer of {len(digits.lstrip('-')):,} digits, more than the "
                        f"{MAX_INT_DIGITS} allowed")
        return int(digits)
    try:
        return json.loads(text, parse_int=bounded_int)
    except json.JSONDecodeError as err:
        raise error(f"{where}: not JSON ({err})") from None


def integer(value, name, low=1, high=None, error=InvalidValue):
    """``value`` if it is an int (a bool is not) in [low, high], else ``error`` naming ``name``."""
    if not is_int(value) or (low is not None and value < low) or (high is not None and value > high):
        rule = {1: "a positive int", 0: "an int >= 0", None: "an int"}.get(low, f"an int >= {low}")
        raise error(f"{name} must be {rule}{f' (at most {high:,})' if high is not None else ''}, "
                    f"got {value!r}")
    return int(value)


def number(value, name, rule, ok=lambda value: True, error=InvalidValue):
    """``value`` if it is a finite real number (a bool or a string is not) for which ``ok`` is
    true, else ``error`` naming ``name`` and the accepted ``rule`` ("lie in [0, 1)", "be a
    finite number > 0")."""
    if not is_real(value) or not math.isfinite(value) or not ok(value):
        raise error(f"{name} must {rule}, got {value!r}")
    return value
