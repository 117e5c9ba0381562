"""A strict stand-in for CuPy, for catching host/device mixing on a CPU.

CuPy arrays live on the GPU and refuse to mix with NumPy arrays: ``cupy_array + numpy_array`` and
``numpy.asarray(cupy_array)`` raise ``TypeError``. Code that passes on NumPy alone can therefore
still break on a GPU. This module behaves like CuPy where that matters while computing with NumPy
underneath: its ``ndarray`` wraps a NumPy array, every function of the NumPy namespace is offered
through a wrapper that unwraps strict arrays and refuses plain NumPy arrays, and results come back
wrapped. Reductions return 0-d arrays, as CuPy's do. Like CuPy's, an array's ``.data`` is a device
pointer (no host buffer behind it, and no ``.ctypes``), and the random generator has CuPy's shape:
methods only, and its bit generator's ``state`` is a method, not a dict one could save. Integer
index arrays wrap around out of range, as CuPy's do (NumPy would raise IndexError), so no check may
rely on NumPy's error; and Python lists are refused as operands of arithmetic (CuPy raises
TypeError), though accepted as indices and as sequences of arrays (``stack``, ``concatenate``).

Explicit transfers are allowed, as in CuPy: ``asarray``/``array`` accept host data, and an
array's ``get()`` copies back.

It also counts host synchronizations, :func:`host_syncs`: every moment the host waits for the
device to hand back a value (``float``, ``int``, ``bool``, ``item``, ``tolist``, a copy to the
host, and boolean-mask indexing or ``nonzero``, whose result size depends on the data). On a GPU
each one empties the queue of launched kernels, so tests can hold a training step to a budget.

Used only by ``minishare.backend.use("strict")``; nothing else imports it.
"""
import types

import numpy


_syncs = 0


def host_syncs():
    """How many host synchronizations the strict backend has seen so far."""
    return _syncs


def _synced():
    global _syncs
    _syncs += 1


# Functions whose result size depends on the values: the host must read them first.
_SIZED_BY_VALUES = frozenset({"nonzero", "flatnonzero", "argwhere", "unique", "compress", "extract"})


class MixingError(TypeError):
    """A plain NumPy (host) array met a strict (device) array without an explicit transfer."""


def _refuse(what):
    raise MixingError(f"{what}: host (NumPy) and device (strict) arrays must not mix; move data "
                      "explicitly with minishare.backend.asarray / minishare.backend.to_numpy")


def _unwrap(obj):
    """Strict arrays -> their NumPy array; a plain NumPy array here is a silent mix: refuse."""
    if isinstance(obj, ndarray):
        return obj._a
    if isinstance(obj, numpy.ndarray):
        _refuse(f"a NumPy array of shape {obj.shape} was passed where a device array is expected")
    if isinstance(obj, (list, tuple)):
        return type(obj)(_unwrap(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _unwrap(v) for k, v in obj.items()}
    return obj


def _wrap(obj):
    if isinstance(obj, (numpy.ndarray, numpy.generic)):
        return ndarray(numpy.asarray(obj))
    if isinstance(obj, (list, tuple)) and any(isinstance(o, numpy.ndarray) for o in obj):
        return type(obj)(_wrap(o) for o in obj)
    return obj


class _Function:
    """A NumPy callable (function, ufunc, method) behind the unwrap/wrap gate."""

    def __init__(self, fn, syncs=False):
        self._fn, self._syncs = fn, syncs

    def __call__(self, *args, **kwargs):
        if self._syncs:
            _synced()
        if isinstance(self._fn, numpy.ufunc):
            _refuse_lists(args)
        return _wrap(self._fn(*_unwrap(args), **_unwrap(kwargs)))

    def __getattr__(self, attr):   # ufunc methods such as add.at, maximum.reduce
        if attr == "at":
            return _ufunc_at(self._fn)
        return _offer(getattr(self._fn, attr))


def _ufunc_at(ufunc):
    """``ufunc.at(a, indices, b)`` with CuPy's out-of-range rule for integer index arrays."""
    def at(a, indices, b=None):
        _refuse_lists((b,))
        args = (b,) if b is not None else ()
        ufunc.at(a._a, _wrap_around(a._a.shape, _unwrap(indices)), *_unwrap(args))
    return at


def _refuse_lists(operands):
    for operand in operands:
        if isinstance(operand, (list, tuple)):
            raise TypeError(f"Unsupported type {type(operand)}: a device array op takes arrays and "
                            "scalars, not Python lists (move data with minishare.backend.asarray)")


def _wrap_around(shape, index):
    """Integer index arrays taken modulo their axis' size: CuPy wraps out-of-range indices around
    instead of raising IndexError as NumPy does."""
    parts = index if isinstance(index, tuple) else (index,)
    consumed = sum(1 if getattr(p, "dtype", None) != bool else p.ndim
                   for p in parts if p is not None and p is not Ellipsis)
    axis, wrapped = 0, []
    for part in parts:
        if part is Ellipsis:
            axis += len(shape) - consumed
        elif isinstance(part, (numpy.ndarray, list)) and numpy.asarray(part).dtype.kind in "iu":
            if axis < len(shape) and shape[axis]:
                part = numpy.asarray(part) % shape[axis]
            axis += 1
        elif part is not None:
            axis += part.ndim if getattr(part, "dtype", None) == bool else 1
        wrapped.append(part)
    return tuple(wrapped) if isinstance(index, tuple) else wrapped[0]


class _Namespace:
    """A NumPy module or object (numpy.random, numpy.linalg, a Generator) behind the gate."""

    def __init__(self, target):
        self._target = target

    def __getattr__(self, attr):
        return _offer(getattr(self._target, attr))


def _offer(value, name=None):
    if name in _SIZED_BY_VALUES:
        return _Function(value, syncs=True)
    if isinstance(value, type) or isinstance(value, numpy.dtype):
        return value                      # dtypes and classes: float32, dtype, ...
    if isinstance(value, types.ModuleType):
        return _Namespace(value)
    if callable(value):
        return _Function(value)
    return _wrap(value)                   # constants: pi, inf, newaxis


class ndarray:
    """A device array of the strict backend: a NumPy array that refuses implicit transfers."""

    __array_ufunc__ = None   # NumPy defers every binary op with us to our reflected methods

    def __init__(self, a):
        self._a = a

    def __array__(self, *args, **kwargs):
        _refuse("implicit conversion of a device array to NumPy")

    def __getattr__(self, attr):          # shape, dtype, T, sum(), reshape(), astype(), ...
        if attr.startswith("__"):         # __array_interface__ & co. would hand NumPy the buffer
            raise AttributeError(attr)
        if attr == "ctypes":              # CuPy arrays have none: there is no host buffer to point at
            raise AttributeError("a device array has no .ctypes (its memory is not host memory)")
        return _offer(getattr(self._a, attr), attr)

    @property
    def data(self):
        """As ``cupy.ndarray.data``: a pointer into device memory, not a host buffer."""
        return MemoryPointer(self._a.__array_interface__["data"][0])

    def __getitem__(self, index):
        index = _wrap_around(self._a.shape, _unwrap(index))
        if any(getattr(i, "dtype", None) == bool for i in (index if isinstance(index, tuple) else (index,))):
            _synced()                     # the result's size is the number of True values
        return _wrap(self._a[index])

    def __setitem__(self, index, value):
        self._a[_wrap_around(self._a.shape, _unwrap(index))] = _unwrap(value)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (_wrap(row) for row in self._a)

    def __float__(self):
        _synced()
        return float(self._a)

    def __int__(self):
        _synced()
        return int(self._a)

    def __index__(self):
        _synced()
        return self._a.__index__()

    def __bool__(self):
        _synced()
        return bool(self._a)

    def item(self):
        _synced()
        return self._a.item()

    def tolist(self):
        _synced()
        return self._a.tolist()

    def get(self):
        """As ``cupy.ndarray.get``: a host copy (a synchronization)."""
        _synced()
        return self._a.copy()

    def __repr__(self):
        return "strict_" + repr(self._a)


def _defers(other):
    """NumPy's protocol: a type with ``__array_ufunc__ = None`` (minishare's Tensor) handles the
    operation itself, through its reflected method."""
    return not isinstance(other, ndarray) and getattr(type(other), "__array_ufunc__", False) is None


def _binary(op):
    def method(self, other):
        if _defers(other):
            return NotImplemented
        _refuse_lists((other,))
        return _wrap(op(self._a, _unwrap(other)))
    return method


def _reflected(op):
    def method(self, other):
        _refuse_lists((other,))
        return _wrap(op(_unwrap(other), self._a))
    return method


def _inplace(op):
    def method(self, other):
        _refuse_lists((other,))
        op(self._a, _unwrap(other), out=self._a)
        return self
    return method


for _name, _op in [("add", numpy.add), ("sub", numpy.subtract), ("mul", numpy.multiply),
                   ("truediv", numpy.true_divide), ("floordiv", numpy.floor_divide),
                   ("mod", numpy.mod), ("pow", numpy.power), ("matmul", numpy.matmul),
                   ("and", numpy.bitwise_and), ("or", numpy.bitwise_or),
                   ("xor", numpy.bitwise_xor)]:
    setattr(ndarray, f"__{_name}__", _binary(_op))
    setattr(ndarray, f"__r{_name}__", _reflected(_op))
    if _name != "matmul":
        setattr(ndarray, f"__i{_name}__", _inplace(_op))
for _name, _op in [("eq", numpy.equal), ("ne", numpy.not_equal), ("lt", numpy.less),
                   ("le", numpy.less_equal), ("gt", numpy.greater), ("ge", numpy.greater_equal)]:
    setattr(ndarray, f"__{_name}__", _binary(_op))
for _name, _op in [("neg", numpy.negative), ("pos", numpy.positive), ("abs", numpy.abs),
                   ("invert", numpy.invert)]:
    setattr(ndarray, f"__{_name}__", lambda self, _op=_op: _wrap(_op(self._a)))
ndarray.__hash__ = None


class MemoryPointer:
    """What ``cupy.ndarray.data`` is (``cupy.cuda.MemoryPointer``): an address in device memory.
    It holds no numbers, so using it as data fails, as it does on a GPU."""

    def __init__(self, ptr):
        self.ptr = ptr

    def __array__(self, *args, **kwargs):
        _refuse("a device memory pointer (an array's .data) used as host data")

    def __repr__(self):
        return f"<MemoryPointer 0x{self.ptr:x}>"


class XORWOW:
    """CuPy's default bit generator, in shape: ``state`` is a method returning the address of the
    generator's device state, and it cannot be assigned (``cupy.random.XORWOW`` is an extension
    type). Numbers come from a NumPy generator underneath."""
    __slots__ = ("_host",)

    def __init__(self, seed=None):
        self._host = numpy.random.default_rng(seed)

    def state(self):
        return id(self._host)


class Generator:
    """``cupy.random.Generator`` in shape: draws through its methods only (no NumPy-only extras)."""

    def __init__(self, bit_generator):
        self.bit_generator = bit_generator

    def random(self, size=None, dtype=numpy.float64, out=None):
        return _draw(self.bit_generator._host.random(size, dtype=dtype), out)

    def integers(self, low, high=None, size=None, dtype=numpy.int64, endpoint=False):
        return _wrap(numpy.asarray(self.bit_generator._host.integers(low, high, size, dtype, endpoint)))

    def standard_normal(self, size=None, dtype=numpy.float64, out=None):
        return _draw(self.bit_generator._host.standard_normal(size, dtype=dtype), out)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=numpy.float64):
        return _wrap(numpy.asarray(self.bit_generator._host.uniform(low, high, size)).astype(dtype))


def _draw(values, out):
    if out is None:
        return _wrap(numpy.asarray(values))
    out._a[...] = values
    return out


def default_rng(seed=None):
    """As ``cupy.random.default_rng``: a Generator over an XORWOW bit generator."""
    return Generator(XORWOW(seed))


# ``xp.random``: CuPy's Generator API only, none of NumPy's legacy global state.
random = types.SimpleNamespace(default_rng=default_rng, Generator=Generator, XORWOW=XORWOW)


def asarray(data, dtype=None):
    """Host data -> device array: an explicit transfer, allowed (as ``cupy.asarray``)."""
    if isinstance(data, ndarray):
        return data if dtype is None else ndarray(data._a.astype(dtype, copy=False))
    return ndarray(numpy.array(data, dtype=dtype))


def array(data, dtype=None):
    """Like ``asarray``, but always a copy (as ``cupy.array``)."""
    return ndarray(numpy.array(data._a if isinstance(data, ndarray) else data, dtype=dtype))


def __getattr__(attr):                    # every other NumPy name, behind the gate
    return _offer(getattr(numpy, attr), attr)
