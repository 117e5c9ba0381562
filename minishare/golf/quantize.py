"""Storing the trained weights at the declared precision, and reading them back.

The score is that of the stored model, so after training every distinct parameter tensor (a shared
one once) is replaced by what its stored form reads back as:

- float16: rounded to the nearest half-precision number.
- int8, symmetric with a scale per row (a row: a slice along the last axis, as ``budget.rows``
  counts them): s = max|row| / 127, q = round(w / s) clipped to [-127, 127], read back as q · s.
  Rounding to the nearest step errs by at most half a step: ``|w − q · s| ≤ s / 2``. A row of zeros
  has s = 0 and reads back as zeros.
"""
import numpy   # the stored forms are host arrays: quantization is bookkeeping, not the model's math

from minishare import backend
from minishare.errors import InvalidValue
from minishare.golf.entry import PRECISIONS


def int8_rows(w):
    """(q int8, s float32 per row) of the host array ``w``; rows along the last axis."""
    w2 = numpy.asarray(w, dtype=numpy.float64).reshape(-1, w.shape[-1] if w.ndim else 1)
    scale = (numpy.abs(w2).max(axis=1) / 127).astype(numpy.float32)          # what is stored
    step = numpy.where(scale > 0, scale, 1).astype(numpy.float64)[:, None]   # a zero row stays zero
    q = numpy.clip(numpy.rint(w2 / step), -127, 127).astype(numpy.int8)
    return q.reshape(w.shape), scale


def int8_read_back(q, scale):
    """The values q · s that the int8 form (``int8_rows``) stands for, float64."""
    q2 = q.astype(numpy.float64).reshape(-1, q.shape[-1] if q.ndim else 1)
    return (q2 * scale.astype(numpy.float64)[:, None]).reshape(q.shape)


def read_back(w, precision):
    """The host array ``w`` as its stored form at ``precision`` reads back, in w's dtype."""
    if precision == "float32":
        return w.astype(numpy.float32).astype(w.dtype)
    if precision == "float16":
        return w.astype(numpy.float16).astype(w.dtype)
    return int8_read_back(*int8_rows(w)).astype(w.dtype)


def quantize_(model, precision):
    """Replace each distinct parameter of ``model`` by its stored form read back, in place."""
    if precision not in PRECISIONS:
        raise InvalidValue(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    for name, p in model.named_parameters():
        stored = read_back(backend.to_numpy(p.data), precision)
        if not numpy.isfinite(stored).all():
            raise InvalidValue(f"{name} does not fit {precision}: its largest magnitude "
                               f"{numpy.abs(backend.to_numpy(p.data)).max():.6g} is beyond the format's range")
        p.data = backend.asarray(stored)
    return model
