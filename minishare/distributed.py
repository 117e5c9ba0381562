"""Data-parallel training over MPI: K processes (ranks), one model copy each, one global batch.

    mpiexec -n 2 python -m minishare train --data-parallel ...

``--batch-size`` stays the *global* batch B. Every rank builds the same global batch (a task's
batch is a pure function of (seed, step)) and trains on its share of the rows, split as
``numpy.array_split`` splits them: the first B mod K ranks take one row more (B = 7, K = 2: rows
0-3 and 4-6). After backward, one Allreduce sums the ranks' gradients, so every rank steps the
same optimizer on the same gradient and the weights stay equal everywhere.

**The weighting.** A loss that is a mean is not the mean of the ranks' means when the ranks hold
different numbers of items: ALBERT's MLM term averages over masked tokens, and one shard may hold
9 of them and the other 15. So each term of the loss (a task's ``loss_terms``) is scaled on rank r
by n_r / n, its items on this rank over its items in the global batch (``loss_counts``, counted
from the labels, with no communication, because every rank holds the global batch); the plain sum
over ranks is then the global batch's mean, exactly, and so is its gradient:

    sum_r (n_r / n) * mean_r = sum_r (n_r / n) * (1 / n_r) * sum_{i in r} loss_i = (1 / n) * sum_i loss_i

**One Allreduce a step.** The gradients of the distinct parameters (a shared tensor is one
parameter, sent once: what crosses the network scales with M, not N), one has-a-gradient flag per
parameter (so a parameter no rank used keeps ``grad = None``, as in one process) and the scaled
loss terms (so the history's losses are the global batch's) go into one flat buffer in the
gradients' dtype. Clipping then sees the global gradient. MPI sends host memory: on a GPU the
buffer is copied to the host and back (one transfer each way, besides the step's one host sync;
a CUDA-aware MPI could take the device buffer instead), and on NumPy it is the host array itself.

**Who does what.** Rank 0 alone evaluates, prints and writes the run folder (config, tokenizer,
checkpoint, history); the others wait for it in the next Allreduce. A resumed run loads the same
checkpoint on every rank (the run folder must be on a file system every rank sees). Dropout masks
are drawn from a generator seeded by (seed, rank, micro-batch), so the ranks' masks differ and a
resumed run draws the masks the uninterrupted run would have. With dropout 0, K ranks reach the
one-process weights up to float32 rounding (the sums run in another order).
"""
import numpy   # host buffers: MPI sends host memory

from minishare import backend
from minishare.errors import MissingPackage
from minishare.nn import utils as nn_utils

INSTALL = "pip install mpi4py mpich"


def mpi():
    """mpi4py's MPI module, imported when data-parallel training asks for it (``import minishare``
    needs NumPy alone); a missing mpi4py is a ``MissingPackage`` error, one line that says what to
    install."""
    try:
        from mpi4py import MPI
    except ImportError:
        raise MissingPackage(f"--data-parallel needs mpi4py and an MPI library: {INSTALL}") from None
    return MPI


def launched_ranks():
    """How many processes the MPI launcher started (1 outside one), read from the environment that
    MPICH (PMI_SIZE) or Open MPI (OMPI_COMM_WORLD_SIZE) set, without importing mpi4py."""
    import os
    for variable in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE"):
        if os.environ.get(variable, "").isdigit():
            return int(os.environ[variable])
    return 1


def end_together(status, wait=10.0):
    """This rank failed with exit ``status``. An error every rank meets at the same point (bad
    arguments, a diverging loss: the loss is the global one) ends them all by itself; one that only
    this rank met leaves the others waiting in an Allreduce forever. So wait up to ``wait`` seconds
    for every rank to arrive here, and abort the whole job if they do not."""
    import time
    try:
        MPI = mpi()
    except MissingPackage:       # then no rank got as far as MPI
        return
    request, deadline = MPI.COMM_WORLD.Ibarrier(), time.monotonic() + wait
    while not request.Test():
        if time.monotonic() > deadline:
            MPI.COMM_WORLD.Abort(status)
        time.sleep(0.05)


def shard_rows(batch_size, size, rank):
    """(start, stop) of ``rank``'s rows of a global batch of ``batch_size`` rows split over
    ``size`` ranks: ``numpy.array_split``'s rule, the first ``batch_size % size`` ranks one row more."""
    base, extra = divmod(batch_size, size)
    start = rank * base + min(rank, extra)
    return start, start + base + (1 if rank < extra else 0)


def shard(batch, size, rank):
    """The rows of ``rank`` of a batch (a dict of host arrays whose first axis is the batch)."""
    sizes = {len(v) for v in batch.values()}
    if len(sizes) != 1:
        raise ValueError(f"cannot split a batch whose arrays have different first axes: "
                         f"{ {k: v.shape for k, v in batch.items()} }")
    start, stop = shard_rows(sizes.pop(), size, rank)
    return {k: v[start:stop] for k, v in batch.items()}


def scaled_terms(task, model, batch, size, rank):
    """This rank's loss terms, each scaled by (its items here) / (its items in the global
    ``batch``): summed over the ranks they make the global batch's loss. Returns {name: Tensor}."""
    part = shard(batch, size, rank)
    everywhere, here = task.loss_counts(batch), task.loss_counts(part)
    terms = task.loss_terms(model, part)
    # a term with no items anywhere is 0 in one process too (cross_entropy's empty mean)
    return {name: term * (here[name] / max(everywhere[name], 1)) for name, term in terms.items()}


def flatten_gradients(parameters, values=()):
    """One flat backend array: every distinct parameter's gradient (zeros where it has none), one
    has-a-gradient flag per parameter, then ``values`` (0-d Tensors or numbers), in the
    gradients' dtype. Returns (buffer, distinct parameters)."""
    from minishare.tensor import Tensor
    xp = backend.xp
    distinct = nn_utils.distinct(parameters)
    dtype = numpy.result_type(*[p.data.dtype for p in distinct])
    parts = [(p.grad if p.grad is not None else xp.zeros(p.shape, dtype=dtype)).astype(dtype).ravel()
             for p in distinct]
    flags = [float(p.grad is not None) for p in distinct]
    scalars = [v.data if isinstance(v, Tensor) else v for v in values]
    tail = [xp.stack([backend.asarray(s, dtype=dtype) for s in [*flags, *scalars]])] if flags or scalars else []
    return xp.concatenate(parts + tail), distinct


def unflatten_gradients(host, distinct):
    """Put the summed gradients of the host array ``host`` (laid out by ``flatten_gradients``) back
    into ``.grad`` as backend arrays (one host -> device copy); a parameter that no rank gave a
    gradient keeps None. Returns the values after them, as floats."""
    total = sum(p.data.size for p in distinct)
    device, flags, offset = backend.asarray(host[:total]), host[total:total + len(distinct)], 0
    for p, flag in zip(distinct, flags):
        n = p.data.size
        p.grad = device[offset:offset + n].reshape(p.shape) if flag > 0 else None
        offset += n
    return host[total + len(distinct):].tolist()


class DataParallel:
    """The ranks of ``comm`` (default MPI.COMM_WORLD) training one model together; see the module
    docstring. The training loop (``minishare.train.Trainer``) calls ``loss`` for each micro-batch
    and ``all_reduce`` once a step."""

    def __init__(self, seed=0, comm=None):
        self.comm = comm if comm is not None else mpi().COMM_WORLD
        self.rank, self.size, self.seed = self.comm.Get_rank(), self.comm.Get_size(), seed
        self.stop_requested = False      # any rank's stop request, as of the last Allreduce
        self.local_stop = lambda: False  # this rank's: set by run_training to its signal handler's

    def loss(self, task, model, batch, index):
        """The training loss of this rank's share of global batch ``index`` and its metrics, every
        term weighted so that the sum over the ranks is the global batch's (``scaled_terms``)."""
        backend.seed(int(numpy.random.SeedSequence([self.seed, self.rank, index]).generate_state(1)[0]))
        terms = scaled_terms(task, model, batch, self.size, self.rank)
        loss = sum(terms.values())
        return loss, {name: term.detach() for name, term in terms.items() if name != "loss"}

    def all_reduce(self, parameters, values):
        """Sum the gradients of ``parameters`` and ``values`` (the step's scaled losses) over the
        ranks in one Allreduce, gradients in place; also learns whether any rank was asked to stop.
        Returns the summed ``values`` as floats."""
        MPI = mpi()
        buffer, distinct = flatten_gradients(parameters, [*values, float(bool(self.local_stop()))])
        host = numpy.ascontiguousarray(backend.to_numpy(buffer))    # device -> host (a GPU)
        self.comm.Allreduce(MPI.IN_PLACE, host, op=MPI.SUM)
        *summed, stops = unflatten_gradients(host, distinct)
        self.stop_requested = stops > 0
        return summed

    def broadcast_parameters(self, parameters):
        """Make every rank's weights rank 0's (one Bcast), so the ranks start equal even where
        initialization or loading were not bit-reproducible."""
        distinct = nn_utils.distinct(parameters)
        if self.size == 1 or not distinct:
            return
        host = numpy.ascontiguousarray(backend.to_numpy(
            backend.xp.concatenate([p.data.ravel() for p in distinct])))
        self.comm.Bcast(host, root=0)
        device, offset = backend.asarray(host), 0
        for p in distinct:
            p.data = device[offset:offset + p.data.size].reshape(p.shape).astype(p.data.dtype)
            offset += p.data.size
