"""A strict stand-in for CuPy, for catching host/device mixing on a CPU.

CuPy arrays live on the GPU and refuse to mix with NumPy arrays: ``cupy_array + numpy_array`` and
``numpy.asarray(cupy_array)`` raise ``TypeError``. Code that passes on NumPy alone can therefore
still break on a GPU. This module behaves like CuPy in that one respect while computing with NumPy
underneath: its ``ndarray`` wraps a NumPy array, every function of the NumPy namespace is offered
through a wrapper that unwraps strict arrays and refuses plain NumPy arrays, and results come back
wrapped. Reductions return 0-d arrays, as CuPy's do.

Explicit transfers are allowed, as in CuPy: ``asarray``/``array`` accept host data, and
:func:`to_numpy` (what ``cupy.ndarray.get`` does) copies back.

Used only by ``minishare.backend.use("strict")``; nothing else imports it.
"""
import types

import numpy


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
    if isinstance(obj, numpy.random.Generator):
        return _Namespace(obj)
    return obj


class _Function:
    """A NumPy callable (function, ufunc, method) behind the unwrap/wrap gate."""

    def __init__(self, fn):
        self._fn = fn

    def __call__(self, *args, **kwargs):
        return _wrap(self._fn(*_unwrap(args), **_unwrap(kwargs)))

    def __getattr__(self, attr):   # ufunc methods such as add.at, maximum.reduce
        return _offer(getattr(self._fn, attr))


class _Namespace:
    """A NumPy module or object (numpy.random, numpy.linalg, a Generator) behind the gate."""

    def __init__(self, target):
        self._target = target

    def __getattr__(self, attr):
        return _offer(getattr(self._target, attr))


def _offer(value):
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
        return _offer(getattr(self._a, attr))

    def __getitem__(self, index):
        return _wrap(self._a[_unwrap(index)])

    def __setitem__(self, index, value):
        self._a[_unwrap(index)] = _unwrap(value)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (_wrap(row) for row in self._a)

    def __float__(self):
        return float(self._a)

    def __int__(self):
        return int(self._a)

    def __index__(self):
        return self._a.__index__()

    def __bool__(self):
        return bool(self._a)

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
        return _wrap(op(self._a, _unwrap(other)))
    return method


def _reflected(op):
    def method(self, other):
        return _wrap(op(_unwrap(other), self._a))
    return method


def _inplace(op):
    def method(self, other):
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


def asarray(data, dtype=None):
    """Host data -> device array: an explicit transfer, allowed (as ``cupy.asarray``)."""
    if isinstance(data, ndarray):
        return data if dtype is None else ndarray(data._a.astype(dtype, copy=False))
    return ndarray(numpy.array(data, dtype=dtype))


def array(data, dtype=None):
    """Like ``asarray``, but always a copy (as ``cupy.array``)."""
    return ndarray(numpy.array(data._a if isinstance(data, ndarray) else data, dtype=dtype))


def to_numpy(a):
    """Device array -> host copy: an explicit transfer, allowed (as ``cupy.ndarray.get``)."""
    return a._a.copy()


def __getattr__(attr):                    # every other NumPy name, behind the gate
    return _offer(getattr(numpy, attr))
