"""Where a minishare training step's time goes: its matrix products alone (the floor), and the step
split by kind of work. Used by ``step_time.py``; it instruments the ops from outside, for the
measurement only: nothing here is on the library's path when the benchmark is not running.

The floor. One step runs with the matrix-product ops (``MatMul``, ``Linear``, ``LoRALinear``)
handed their arrays as ``_Recorded`` views, whose ``@`` notes its two operands (as they are: the
same shapes, strides and dtype) before multiplying. Replayed back to back, with nothing between
them, these products are the time no implementation of the same step can go below on this BLAS
with these threads. Products with a vector (a bias's gradient as ``ones @ g``) are reductions, and
are left out.

The profile. Every op's ``forward`` and ``backward`` is wrapped by a timer, and the time is added
to the kind of its module: matrix products, elementwise passes, reductions (sums, softmax,
LayerNorm, cross-entropy), indexing and shape moves. ``autograd.accumulate`` (the sum of a
gradient's uses) counts as elementwise. What forward and backward take beyond all of that is the
graph's and the model's bookkeeping in Python (``Function.apply``, tensors, modules, the walk);
the optimizer's ``step`` and ``zero_grad`` are timed apart. The timers add a little of their own,
which lands in the bookkeeping row: compare the profiled step's total with the unprofiled median.
"""
import contextlib
import statistics
import time

import numpy as np

from minishare import autograd, backend
from minishare.autograd import Function

now = time.perf_counter   # the clock: step_time.py sets time.process_time for --clock cpu
MATRIX_PRODUCTS = "matrix products"
KINDS = {"minishare.ops.matmul": MATRIX_PRODUCTS, "minishare.ops.lora": MATRIX_PRODUCTS,
         "minishare.ops.elementwise": "elementwise passes", "minishare.ops.nonlinear": "elementwise passes",
         "minishare.ops.dropout": "elementwise passes",
         "minishare.ops.reduce": "reductions (sum, softmax, LayerNorm, CE)",
         "minishare.ops.softmax": "reductions (sum, softmax, LayerNorm, CE)",
         "minishare.ops.layer_norm": "reductions (sum, softmax, LayerNorm, CE)",
         "minishare.ops.cross_entropy": "reductions (sum, softmax, LayerNorm, CE)",
         "minishare.ops.embedding": "indexing and shape", "minishare.ops.shape": "indexing and shape",
         "minishare.ops.tokens": "indexing and shape"}
ORDER = [MATRIX_PRODUCTS, "elementwise passes", "reductions (sum, softmax, LayerNorm, CE)",
         "indexing and shape", "other ops", "graph and Python bookkeeping", "optimizer"]


def op_classes():
    """Every Function subclass defined so far, fast forms included."""
    found, todo = [], [Function]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            found.append(sub)
            todo.append(sub)
    return found


def kind_of(cls):
    return KINDS.get(cls.__module__, "other ops")


@contextlib.contextmanager
def patched(replacements):
    """Set (owner, name) -> value for the block, then put the originals back."""
    originals = {(owner, name): owner.__dict__[name] for owner, name in replacements}
    try:
        for (owner, name), value in replacements.items():
            setattr(owner, name, value)
        yield
    finally:
        for (owner, name), value in originals.items():
            setattr(owner, name, value)


# ---- the floor --------------------------------------------------------------------------------
class _Recorded(np.ndarray):
    """A view whose ``@`` records its operands (``_Recorded.log``) and returns a plain array."""
    log = None

    def __matmul__(self, other):
        return _record(self, other)

    def __rmatmul__(self, other):
        return _record(other, self)


def _plain(a):
    return a.view(np.ndarray) if isinstance(a, np.ndarray) else a


def _record(a, b):
    a, b = _plain(a), _plain(b)
    if a.ndim >= 2 and b.ndim >= 2:
        _Recorded.log.append((a, b))
    return np.matmul(a, b)


def _recording(method):
    def wrapper(self, *args, **kwargs):
        view = lambda a: a.view(_Recorded) if type(a) is np.ndarray else a
        if method.__name__ == "backward":
            self.__dict__.update({k: view(v) for k, v in self.__dict__.items()})
        result = method(self, *(view(a) for a in args), **kwargs)
        return tuple(map(_plain, result)) if isinstance(result, tuple) else _plain(result)
    wrapper.__name__ = method.__name__
    return wrapper


def record_products(step):
    """The (A, B) operand pairs of every matrix product of one ``step()``, in order."""
    _Recorded.log = []
    methods = {(cls, name): _recording(cls.__dict__[name]) for cls in op_classes()
               if kind_of(cls) == MATRIX_PRODUCTS for name in ("forward", "backward") if name in cls.__dict__}
    try:
        with patched(methods):
            step()
        return _Recorded.log
    finally:
        _Recorded.log = None


def floor(step, repeats):
    """(median seconds of the step's products replayed back to back, their count, GFLOP), or None
    off NumPy (CuPy's and the strict backend's arrays cannot be recorded this way)."""
    if backend.name != "numpy":
        return None
    products = record_products(step)
    times = []
    for _ in range(repeats + 1):
        start = now()
        for a, b in products:
            np.matmul(a, b)
        times.append(now() - start)
    flops = sum(2 * int(np.prod(np.broadcast_shapes(a.shape[:-2], b.shape[:-2])))
                * a.shape[-2] * a.shape[-1] * b.shape[-1] for a, b in products)
    return statistics.median(times[1:]), len(products), flops / 1e9


# ---- the profile --------------------------------------------------------------------------------
class _Clock:
    def __init__(self):
        self.seconds, self.depth = {}, 0

    def add(self, kind, seconds):
        self.seconds[kind] = self.seconds.get(kind, 0.0) + seconds

    def timing(self, kind, method):
        clock = self

        def wrapper(*args, **kwargs):
            if clock.depth:                      # a fast form calling its reference: counted once
                return method(*args, **kwargs)
            clock.depth += 1
            start = now()
            try:
                return method(*args, **kwargs)
            finally:
                clock.add(kind, now() - start)
                clock.depth -= 1
        return wrapper


def profile(model_step, optimizer_step, steps):
    """{kind: mean seconds per step} over ``steps`` steps, plus "total". ``model_step()`` runs
    forward and backward, ``optimizer_step()`` the update and zero_grad."""
    clock = _Clock()
    methods = {(cls, name): clock.timing(kind_of(cls), cls.__dict__[name]) for cls in op_classes()
               for name in ("forward", "backward") if name in cls.__dict__}
    methods[(autograd, "accumulate")] = clock.timing("elementwise passes", autograd.accumulate)
    with patched(methods):
        for _ in range(steps):
            backend.synchronize()
            start = now()
            model_step()
            backend.synchronize()
            middle = now()
            optimizer_step()
            backend.synchronize()
            clock.add("optimizer", now() - middle)
            clock.add("total", now() - start)
            clock.add("forward and backward", middle - start)
    seconds = {kind: s / steps for kind, s in clock.seconds.items()}
    in_ops = sum(s for kind, s in seconds.items() if kind not in ("optimizer", "total", "forward and backward"))
    seconds["graph and Python bookkeeping"] = seconds.pop("forward and backward") - in_ops
    return seconds


def print_profile(seconds, median):
    total = seconds["total"]
    print(f"profile of minishare's step by kind (ms per step; the profiled step took {total * 1e3:.1f} ms, "
          f"{median * 1e3:.1f} ms unprofiled):")
    for kind in ORDER:
        if kind in seconds:
            print(f"    {kind:42s} {seconds[kind] * 1e3:8.2f} ms  {seconds[kind] / total:6.1%}")
