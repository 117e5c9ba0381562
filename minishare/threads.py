"""How many threads the CPU's matrix products use: ``set_num_threads`` and ``get_num_threads``,
named as in PyTorch.

NumPy hands its matrix products to a BLAS library (OpenBLAS, MKL), which starts one thread per
core by default. The course's models are small: on a busy or small machine those threads wait on
each other more than they work, and one thread per process is often fastest. Environment
variables (``OPENBLAS_NUM_THREADS``) are read only once, when NumPy loads; threadpoolctl (an
optional dependency, ``pip install threadpoolctl``) changes the loaded library at any time.
"""
from minishare.checks import is_int
from minishare.errors import InvalidValue, MissingPackage

_controller = None


def _threadpools():
    global _controller
    if _controller is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            raise MissingPackage("setting BLAS threads needs threadpoolctl: "
                                 "pip install threadpoolctl") from None
        _controller = ThreadpoolController()
    return _controller


_elementwise_threads = 1     # until set_num_threads: one, whatever the BLAS starts with


def set_num_threads(n):
    """Use ``n`` threads in the BLAS (and OpenMP) libraries loaded in this process, from now on
    (``torch.set_num_threads``), and as many for the fast elementwise ops' blocks
    (``ops.blocks``: NumPy's ufuncs run on one thread). Worker processes started later set their own."""
    global _elementwise_threads
    if not is_int(n) or n < 1:
        raise InvalidValue(f"set_num_threads: n must be a positive int, got {n!r}")
    _threadpools().limit(limits=n)
    _elementwise_threads = n


def elementwise_threads():
    """Threads the fast elementwise ops share their blocks between: the last ``set_num_threads``,
    1 before any (so a process that never asks runs them on its own thread, as NumPy does)."""
    return _elementwise_threads


def get_num_threads():
    """The number of threads the BLAS library uses (the largest, if several are loaded); None if
    NumPy's BLAS is not one threadpoolctl knows."""
    counts = [pool.num_threads for pool in _threadpools().select(user_api="blas").lib_controllers]
    return max(counts) if counts else None
