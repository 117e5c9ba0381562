"""minishare: a hand-written autograd and Transformer for learning how parameter sharing makes
Transformers smaller (ALBERT, the Universal Transformer, Takase & Kiyono).

    import minishare
    x = minishare.tensor([[1.0, 2.0]], requires_grad=True)
    (x * x).sum().backward()      # x.grad == 2x
"""
import os
import signal
import sys

_STARTING = sys.argv[:1] == ["-m"] and "minishare" in sys.orig_argv   # runpy imports us to run us
_INTERRUPTED = []                 # the signals seen while this package was being imported


def _interrupted_while_starting(kind, value, traceback, default=sys.excepthook):
    """For ``python -m minishare``: a Ctrl-C (or SIGTERM, SIGHUP) while this package and the
    command line are still being imported, before the command line can catch anything, ends with
    one line like one a moment later. One that lands inside NumPy's own import surfaces as an
    ImportError about a broken install, so a signal seen while starting ends the same way
    whatever the exception."""
    if issubclass(kind, KeyboardInterrupt) or _INTERRUPTED:
        # a SIGTERM or SIGHUP the command line's own handler turned into KeyboardInterrupt (one
        # landing before its try block) carries its signal
        number = signal.Signals(_INTERRUPTED[0] if _INTERRUPTED else getattr(value, "signal", signal.SIGINT))
        by = "" if number == signal.SIGINT else f" by {number.name}"
        print(f"python -m minishare: interrupted{by}", file=sys.stderr, flush=True)
        os._exit(128 + number)
    default(kind, value, traceback)


def _seen_while_starting(signum, frame):
    _INTERRUPTED.append(signum)
    raise KeyboardInterrupt


# (not a signal the shell started us ignoring: a background job's SIGINT, nohup's SIGHUP). SIGTERM
# and SIGHUP stay watched until the command line installs its own handlers (``cli.main``).
_WATCHING = [number for number, default in ((signal.SIGINT, signal.default_int_handler),
                                            (signal.SIGTERM, signal.SIG_DFL), (signal.SIGHUP, signal.SIG_DFL))
             if _STARTING and signal.getsignal(number) is default]
if _STARTING:
    sys.excepthook = _interrupted_while_starting
for _number in _WATCHING:
    signal.signal(_number, _seen_while_starting)

from minishare import backend  # noqa: E402
from minishare.errors import MinishareError  # noqa: E402
from minishare.gradcheck import GradcheckError, gradcheck  # noqa: E402
from minishare.random import manual_seed  # noqa: E402
from minishare.tensor import Function, Tensor, as_tensor, is_grad_enabled, no_grad, tensor  # noqa: E402
from minishare.threads import get_num_threads, set_num_threads  # noqa: E402
from minishare.params import count_parameters  # noqa: E402 (needs the engine above)
from minishare.checkpoint import CheckpointError, load, save  # noqa: E402

if signal.SIGINT in _WATCHING:    # imported: the command line answers a Ctrl-C from here on
    signal.signal(signal.SIGINT, signal.default_int_handler)
if _INTERRUPTED:                  # an import caught the KeyboardInterrupt as a failed import
    _interrupted_while_starting(KeyboardInterrupt, None, None)

__all__ = ["backend", "Tensor", "Function", "tensor", "as_tensor", "no_grad", "is_grad_enabled", "gradcheck",
           "GradcheckError", "manual_seed", "count_parameters", "save", "load", "CheckpointError",
           "set_num_threads", "get_num_threads", "MinishareError"]
