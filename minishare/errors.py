"""The library's own errors: what it refuses on purpose, told apart from a bug.

A check of what a user gives (an argument out of range, a configuration or sharing plan that
cannot be built, a corpus, tokenizer or checkpoint file it will not read, a run it will not
start) raises a ``MinishareError``. Each keeps the builtin type that says what kind of mistake it
is: ``InvalidValue`` is a ``ValueError``, ``InvalidType`` a ``TypeError``, ``CheckpointError`` a
``ValueError``, ``RunInUse`` a ``FileExistsError``; so ``except ValueError`` goes on catching them.

The command line relies on the difference: it answers a ``MinishareError`` (and an ``OSError``)
with one line, and lets anything else through with its traceback, since a plain ``ValueError`` or
``TypeError`` from deep inside NumPy, or from an op's check of the shapes it was handed, is a bug
to be read, not a mistake of the user's. An error that reports a bug in code (the strict
backend's ``MixingError``) is therefore not a ``MinishareError``.
"""


class MinishareError(Exception):
    """Base of the errors minishare raises on purpose; the message says what to change."""


class InvalidValue(MinishareError, ValueError):
    """A value the library refuses: an argument or configuration field out of its range, an
    unknown name, a file whose content is not what it should be. The message names it."""


class InvalidType(MinishareError, TypeError):
    """An argument of the wrong type, such as a bool or a float where an int belongs."""


class MissingPackage(MinishareError, ImportError):
    """An optional package that a feature needs is not installed; the message says what to
    install."""
