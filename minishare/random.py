"""Seeding. Two generators serve minishare, both reset by :func:`manual_seed`:

* a host NumPy generator for parameter initialization, so a model starts from the same weights on
  every backend (CPU and GPU runs of a seed are comparable);
* the backend's generator (``backend.rng()``) for dropout masks, drawn where the activations live.
"""
import numpy

from minishare import backend

_host = numpy.random.default_rng(0)


def manual_seed(seed):
    """Make initialization and dropout reproducible (PyTorch's ``torch.manual_seed``)."""
    global _host
    _host = numpy.random.default_rng(seed)
    backend.seed(seed)


def host_generator():
    """The host generator that parameter initializers draw from."""
    return _host
