"""Which array library minishare computes with.

Every op asks this module for its array library, ``backend.xp``, at call time; no other module
imports NumPy for its math. Three backends exist:

* ``"numpy"``  the default; arrays live in host memory.
* ``"cupy"``   the same code on an NVIDIA GPU (CuPy mirrors NumPy's API).
* ``"strict"`` a CPU stand-in for CuPy: NumPy underneath, but its arrays refuse to mix with plain
               NumPy arrays, as CuPy's do. Running the test suite under it
               (``MINISHARE_BACKEND=strict pytest``) catches host/device mixing without a GPU.

Choose with the environment variable ``MINISHARE_BACKEND`` before import, or at run time with
``minishare.backend.use("cupy")``. Switch before building a model: arrays made under one backend
are not moved when you switch.

Data crosses between host and device only through :func:`asarray` (host -> backend) and
:func:`to_numpy` (backend -> host), so every transfer is explicit. Every read of a device value on
the host (``float(x)``, ``.item()``, ``to_numpy``) waits for the GPU's queue to drain: a training
step makes one (``minishare.train``), and the strict backend counts them (:func:`host_syncs`).

Ops come in two forms where speed needs it (``minishare.ops``): the reference form, the equation
in plain array code, which the book lists, and a fast form beside it (fused passes, work in place,
cache-sized blocks, sums as products with ones) that computes the same numbers. The fast forms are
used unless :func:`use_reference_ops` says otherwise, or the environment variable
``MINISHARE_OPS=reference`` did at import: one switch, so a student can time the difference.

A training run (``minishare.run``: ``python -m minishare train`` and the reproduction's runs) asks
the C library to keep the memory of freed arrays for the next ones (:func:`keep_freed_memory`): a
training step frees and allocates the same large arrays over and over, and glibc's default hands
each one back to the kernel, which then zeroes it afresh page by page (11,000 page faults in one
step of the course's model, a fifth of the step's CPU time). ``import minishare`` alone leaves the
process's allocator as it found it; a notebook can call the function itself.

Scatter-adds (``xp.add.at``: the backward of embedding lookups and of integer indexing) are one call
on every backend. On a GPU they use atomic adds, whose order varies from run to run, so float32
sums there are not bit-reproducible; on a CPU they are. No test or claim relies on bit-equality on
a GPU.
"""
import contextlib
import math
import os
import sys

import numpy

from minishare.errors import MinishareError

NAMES = ("numpy", "cupy", "strict")
OPS_FORMS = ("fast", "reference")

xp = numpy             # the array module every op uses
name = "numpy"         # the name of the active backend
default_dtype = numpy.float32   # parameters and data given as Python floats
reference_ops = False  # True: every op runs its reference form (see use_reference_ops)


def use(backend_name):
    """Make ``backend_name`` ("numpy", "cupy" or "strict") the array library from now on."""
    global xp, name
    if backend_name not in NAMES:
        raise ValueError(f"unknown backend {backend_name!r}: choose one of {', '.join(NAMES)}")
    if backend_name == "numpy":
        xp = numpy
    elif backend_name == "strict":
        from minishare import _strict
        xp = _strict
    else:
        xp = _import_cupy()
    name = backend_name
    return xp


def use_reference_ops(on=True):
    """Run every op in its reference form (``on=True``: the equation as the book lists it) or in
    its fast form (``on=False``, the default). Both give the same numbers up to rounding; the switch
    takes effect at the next op, so change it between steps, not between a forward pass and its
    backward."""
    global reference_ops
    reference_ops = bool(on)


def keep_freed_memory():
    """Make glibc keep freed memory for reuse instead of returning it to the kernel: blocks up to
    32 MB come from the heap rather than from their own mapping (``M_MMAP_THRESHOLD``; by default
    glibc moves that limit itself between 128 kB and 32 MB), and up to 256 MB free at the heap's top
    stays (``M_TRIM_THRESHOLD``). A step then reuses the pages of the previous one instead of taking
    fresh zeroed ones, one page fault each. All threads share one heap (``M_ARENA_MAX``): by default
    glibc gives each thread that allocates a heap of its own, and memory kept there (the
    temporaries of the elementwise blocks run on a second thread, ``minishare.ops.blocks``) could
    not be reused by the main thread, which raised the peak by a few percent at two threads. So the
    peak is not raised, only returned later. True where it applied; elsewhere (macOS, musl,
    Windows) it does nothing and returns False."""
    try:
        import ctypes
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (ImportError, OSError, AttributeError):   # no ctypes, no glibc, no mallopt
        return False
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_ARENA_MAX = -1, -3, -8
    return all([mallopt(M_MMAP_THRESHOLD, 32 << 20), mallopt(M_TRIM_THRESHOLD, 256 << 20),
                mallopt(M_ARENA_MAX, 1)])


def _import_cupy():
    try:
        import cupy
    except ImportError as err:
        raise RuntimeError("backend 'cupy' asked for, but CuPy is not installed "
                           "(pip install -r requirements-gpu.txt: CuPy with its CUDA libraries)") from err
    try:
        n_gpus = cupy.cuda.runtime.getDeviceCount()
    except Exception as err:  # CUDA driver missing or broken
        raise RuntimeError(f"backend 'cupy' asked for, but CUDA reports no usable GPU: {err}") from err
    if n_gpus == 0:
        raise RuntimeError("backend 'cupy' asked for, but no GPU is visible")
    return cupy


def is_array(obj):
    """True if ``obj`` is an array of the active backend."""
    return isinstance(obj, xp.ndarray)


def asarray(data, dtype=None):
    """Move host data (a list, a number, a NumPy array) to the active backend: the one explicit
    host -> device transfer. Python floats become ``default_dtype``; arrays keep their dtype."""
    if isinstance(data, xp.ndarray):
        return data if dtype is None else data.astype(dtype, copy=False)
    host = numpy.asarray(data, dtype=dtype)
    if dtype is None and host.dtype == numpy.float64 and not isinstance(data, (numpy.ndarray, numpy.generic)):
        host = host.astype(default_dtype)   # lists and Python floats: float32, as in PyTorch
    return host if xp is numpy else xp.asarray(host)


def to_numpy(array):
    """A backend array as a NumPy array in host memory: the one explicit device -> host transfer
    (a copy from a GPU; on the NumPy backend the array itself, so copy before modifying it)."""
    if isinstance(array, (numpy.ndarray, numpy.generic)):
        return numpy.asarray(array)
    return array.get()


_pending = None   # a list while checks are deferred (inside a training step), else None


def check(bad, error):
    """Raise ``error()`` if the device boolean ``bad`` is true: the input checks of ops (ids in
    range). Reading ``bad`` makes the host wait for the device, so inside :func:`deferred_checks`
    it is only recorded, and read together with the training step's one sync."""
    if _pending is None:
        if bool(bad):
            raise error()
    else:
        _pending.append((bad, error))


@contextlib.contextmanager
def deferred_checks():
    """Within the block :func:`check` records instead of reading; yields the list of recorded
    (bad, error) pairs, for the caller to read with its one transfer and raise the first."""
    global _pending
    previous, _pending = _pending, []
    try:
        yield _pending
    finally:
        _pending = previous


def synchronize():
    """Wait until the device has finished the work queued so far. A GPU runs kernels after they are
    launched: read a clock only after this, or it times the launches. Nothing to wait for on a CPU."""
    if name == "cupy":
        xp.cuda.get_current_stream().synchronize()


def host_syncs():
    """How many times the host has waited for the device so far (each one empties a GPU's queue),
    as counted by the strict backend; None on the others, which do not count."""
    return xp.host_syncs() if name == "strict" else None


def erf(x):
    """The error function, elementwise: the exact GELU needs it and NumPy has none."""
    if name == "cupy":
        import cupyx.scipy.special
        return cupyx.scipy.special.erf(x)
    host = to_numpy(x)
    try:
        from scipy.special import erf as host_erf   # optional and fast
    except ImportError:
        host_erf = numpy.vectorize(math.erf, otypes=[host.dtype])
    return asarray(host_erf(host).astype(host.dtype))


def max_along(x, axis):
    """The maximum of a float array along ``axis``, kept as an axis of size 1. NumPy is given -inf
    to start from, which changes no maximum: with a starting value its loop over short rows, such
    as attention's rows of 64 keys, ran 2.5 times as fast. CuPy's max takes no starting value."""
    if name == "numpy":
        return x.max(axis=axis, keepdims=True, initial=-numpy.inf)
    return x.max(axis=axis, keepdims=True)


_rng = None
_rng_backend = None


def rng():
    """The backend's random generator (dropout masks). Seed it with :func:`minishare.random.manual_seed`."""
    if _rng is None or _rng_backend != name:
        seed(0)
    return _rng


def seed(value):
    """Reset the backend's random generator to ``value``."""
    global _rng, _rng_backend
    _rng, _rng_backend = xp.random.default_rng(value), name
    return _rng


class BackendError(MinishareError, ImportError):
    """``MINISHARE_BACKEND`` names a backend that is unknown or cannot run on this machine, or
    ``MINISHARE_OPS`` a form of the ops that does not exist."""


def _use_reference_ops_named(value):
    if value not in OPS_FORMS:
        raise ValueError(f"unknown form of the ops {value!r}: choose one of {', '.join(OPS_FORMS)}")
    use_reference_ops(value == "reference")


def _use_environment_choice(variable, choose):
    value = os.environ[variable]
    try:
        choose(value)
    except (ValueError, RuntimeError) as err:
        # This happens inside ``import minishare`` (``python -m minishare`` imports the package
        # before any of our code runs), so nothing of ours can catch it: if nobody else does,
        # print it as one line instead of a traceback through the import machinery.
        previous = sys.excepthook

        def one_line(kind, error, traceback):
            if issubclass(kind, BackendError):
                print(f"minishare: error: {error}", file=sys.stderr)
            else:
                previous(kind, error, traceback)
        sys.excepthook = one_line
        raise BackendError(f"{variable}={value!r}: {err}") from None


if os.environ.get("MINISHARE_BACKEND"):
    _use_environment_choice("MINISHARE_BACKEND", use)
if os.environ.get("MINISHARE_OPS"):
    _use_environment_choice("MINISHARE_OPS", _use_reference_ops_named)
