"""What counts as a number in an argument: the one rule every check of the library applies.

A bool is an int to Python (``True == 1``) but never a layer count, a seed or a learning rate;
a float such as 6.0 layers is a bug upstream, so it is not an int either. NumPy's integer scalars
are ints.
"""
from numbers import Integral, Real

from minishare.errors import InvalidType


def is_int(value):
    """An integer that is not a bool."""
    return isinstance(value, Integral) and not isinstance(value, bool)


def is_real(value):
    """A real number (an int or a float) that is not a bool."""
    return isinstance(value, Real) and not isinstance(value, bool)


def check_int(value, name):
    """``value`` as an int, or an ``InvalidType`` (a TypeError) that names it."""
    if not is_int(value):
        raise InvalidType(f"{name} must be an int, got {value!r} ({type(value).__name__})")
    return int(value)
