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


def set_num_threads(n):
    """Use ``n`` threads in the BLAS (and OpenMP) libraries loaded in this process, from now on
    (``torch.set_num_threads``). Worker processes started later set their own."""
    if not is_int(n) or n < 1:
        raise InvalidValue(f"set_num_threads: n must be a positive int, got {n!r}")
    _threadpools().limit(limits=n)


def get_num_threads():
    """The number of threads the BLAS library uses (the largest, if several are loaded); None if
    NumPy's BLAS is not one threadpoolctl knows."""
    counts = [pool.num_threads for pool in _threadpools().select(user_api="blas").lib_controllers]
    return max(counts) if counts else None
