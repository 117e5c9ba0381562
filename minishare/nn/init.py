"""Parameter initializers (PyTorch's ``torch.nn.init`` names). Values are drawn on the host from
``minishare.random``'s generator and then moved to the backend, so a seed gives the same initial
weights on CPU and GPU."""
import contextlib
import math

import numpy   # host-side random draws; the backend receives the finished array

from minishare import backend
from minishare.random import host_generator


_shape_only = False


@contextlib.contextmanager
def shape_only():
    """Inside ``with shape_only():`` new parameters get their shapes but no memory (a read-only
    zero-strided view) and initializers do nothing. For counting the parameters of full-size
    presets (BERT-large, ALBERT-xxlarge) without allocating gigabytes; such a model cannot run."""
    global _shape_only
    previous, _shape_only = _shape_only, True
    try:
        yield
    finally:
        _shape_only = previous


def empty(*shape):
    """Storage for a new parameter: zeros of the default dtype (or a shape-only view)."""
    xp = backend.xp
    if _shape_only:
        return xp.broadcast_to(xp.zeros((), dtype=backend.default_dtype), shape)
    return xp.zeros(shape, dtype=backend.default_dtype)


def _fill(tensor, draw):
    """Set ``tensor.data`` to ``draw()`` (a host array), unless building shape-only."""
    if not _shape_only:
        tensor.data = backend.asarray(draw().astype(tensor.dtype))
    return tensor


def normal_(tensor, mean=0.0, std=1.0):
    return _fill(tensor, lambda: host_generator().normal(mean, std, tensor.shape))


def trunc_normal_(tensor, mean=0.0, std=0.02, a=-2.0, b=2.0):
    """Normal(mean, std²) restricted to [a, b] (absolute bounds, as in PyTorch) by redrawing the
    values outside. BERT and ALBERT initialize every weight this way with std = 0.02 (their
    TensorFlow ``truncated_normal`` cuts at two standard deviations: pass a=-2·std, b=2·std)."""
    def draw():
        values = host_generator().normal(mean, std, tensor.shape)
        outside = (values < a) | (values > b)
        while outside.any():
            values[outside] = host_generator().normal(mean, std, int(outside.sum()))
            outside = (values < a) | (values > b)
        return values
    return _fill(tensor, draw)


def uniform_(tensor, a=0.0, b=1.0):
    return _fill(tensor, lambda: host_generator().uniform(a, b, tensor.shape))


def zeros_(tensor):
    return _fill(tensor, lambda: numpy.zeros(tensor.shape))


def ones_(tensor):
    return _fill(tensor, lambda: numpy.ones(tensor.shape))


def linear_default_(weight, bias):
    """PyTorch's default for Linear: U(-1/√in, 1/√in) for weight and bias."""
    bound = 1 / math.sqrt(weight.shape[1])
    uniform_(weight, -bound, bound)
    if bias is not None:
        uniform_(bias, -bound, bound)
