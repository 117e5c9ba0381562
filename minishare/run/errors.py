"""The errors a run ends with on purpose (``run_training``, ``python -m minishare train``): each a
``MinishareError`` that keeps its builtin kind (``minishare.errors``), so the command line answers it
with one line and its own exit status. Each crosses a process boundary (``minishare.experiments.runs``
trains in worker processes): one whose ``__init__`` takes other arguments than its message says
how to rebuild it (``__reduce__``), or unpickling it would fail in the parent."""
from minishare.errors import InvalidValue, MinishareError


class BadArgument(InvalidValue):
    """An argument outside its range; ``.name`` is the argument, so the CLI can name its flag."""

    def __init__(self, name, rule, value):
        super().__init__(f"{name} {rule}, got {value!r}")
        self.name, self.rule, self.value = name, rule, value

    def __reduce__(self):
        return type(self), (self.name, self.rule, self.value)


class TrainingInterrupted(MinishareError):
    """SIGINT, SIGTERM or SIGHUP stopped ``run_training``, which saved its checkpoint and history
    first (or, at a second signal, stopped at once: ``message`` then says which checkpoint is
    kept); or stopped the runs of ``minishare.experiments.runs.train_all`` (``step`` None)."""

    def __init__(self, signal, step, out, message=None):
        super().__init__(message or f"interrupted by {signal.name} after step {step}: checkpoint and "
                         f"history saved in {out}")
        self.signal, self.step, self.out, self.message = signal, step, out, message

    def __reduce__(self):
        return type(self), (self.signal, self.step, self.out, self.message)


class RunInUse(MinishareError, FileExistsError):
    """Another live run holds the folder's lock."""


class TrainingDiverged(MinishareError, FloatingPointError):
    """The loss (or gradient) stopped being finite; the last good checkpoint was kept."""
