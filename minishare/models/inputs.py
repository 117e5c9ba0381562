"""The models' front door: every argument of a forward pass is checked here, by name, before any
op sees it. A mistake (a mask of the wrong shape, a plain list, an empty batch) then reads as one
sentence naming the argument, instead of a broadcasting or indexing error deep inside attention.

Ids, masks and labels may be a ``Tensor`` or an array of the active backend (or a NumPy array);
like PyTorch's models, the models do not take Python lists.
"""
from minishare import backend
from minishare.tensor import Tensor


def _shape(value, name):
    """The shape of a Tensor or array argument; a TypeError naming ``name`` for anything else."""
    if isinstance(value, Tensor) or backend.is_array(value) or type(value).__module__ == "numpy":
        return tuple(value.shape)
    raise TypeError(f"{name} must be a minishare Tensor or an array, got {type(value).__name__}; "
                    f"wrap it with minishare.tensor({name})")


def check_ids(input_ids, name="input_ids"):
    """``input_ids`` (B, T): integers, two axes, at least one token. -> (B, T)."""
    shape = _shape(input_ids, name)
    if len(shape) != 2:
        raise ValueError(f"{name} must have shape (batch, seq_len), got {shape}; "
                         f"for one sequence use ids[None] (shape (1, {shape[0] if shape else 1}))")
    if 0 in shape:
        raise ValueError(f"{name} is empty (shape {shape}): a batch needs at least one sequence "
                         "of at least one token")
    if input_ids.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer token ids, got dtype {input_ids.dtype}")
    return shape


def check_like(value, shape, name, like="input_ids"):
    """An optional argument (mask, token types, labels) that must have the shape ``like`` has."""
    if value is None:
        return
    got = _shape(value, name)
    if got != shape:
        raise ValueError(f"{name} has shape {got}, but {like} has shape {shape}; they must match")


def check_batch(value, batch, name):
    """An optional per-sequence argument (one label per sequence) of shape (B,)."""
    if value is None:
        return
    got = _shape(value, name)
    if got != (batch,):
        raise ValueError(f"{name} must have shape (batch,) = ({batch},), one per sequence, got {got}")


def check_positions(positions, shape, labels=None, ignore_index=-100):
    """``mlm_positions`` (P,): flat indices b·T + t into a (B, T) batch of ``shape``. With
    ``labels`` (B·T,) they must be exactly the positions whose label is not ``ignore_index``, in
    increasing order. The value checks go through ``backend.check`` (read with a training step's
    one sync on a GPU). -> the positions as a Tensor of the active backend."""
    got = _shape(positions, "mlm_positions")
    if len(got) != 1 or positions.dtype.kind not in "iu":
        raise ValueError(f"mlm_positions must be a vector (P,) of integer flat positions b*T + t, got "
                         f"shape {got} and dtype {positions.dtype}; e.g. numpy.flatnonzero(labels != -100)")
    positions = positions if isinstance(positions, Tensor) else Tensor(positions)
    p, n = positions.data, shape[0] * shape[1]
    bad = ((p < 0) | (p >= n)).any()
    if got[0] > 1:
        bad = bad | (p[1:] <= p[:-1]).any()
    message = f"mlm_positions must be increasing flat positions in [0, B*T = {n})"
    if labels is not None:
        labelled = labels.data != ignore_index                           # (B·T,)
        bad = bad | (labelled.sum() != got[0]) | ~labelled[backend.xp.clip(p, 0, n - 1)].all()
        message += f", exactly those whose label is not {ignore_index}"
    backend.check(bad, lambda: ValueError(message + "; e.g. numpy.flatnonzero(labels != -100)"))
    return positions
