"""What sharing saves and what it does not: the memory of one training step, and its time.

Training holds four kinds of arrays (all counted in bytes, each distinct array once)::

    parameters       the weights: one array per distinct tensor
    gradients        one .grad per distinct tensor, the sum over all of its uses (``minishare.autograd``)
    optimizer        what the update rule remembers per distinct tensor: AdamW and LAMB keep two
                     arrays the size of the parameter (Adam's moments "exp_avg", "exp_avg_sq")
    activations      the arrays the graph of one forward pass saves for backward: inputs of
                     matrix products, LayerNorm's normalized input, softmax outputs, dropout masks

Why sharing shrinks the first three and not the fourth. A plan with M distinct sets for N
positions stores M layers' weights, and the gradient and the optimizer state follow the tensor, not
its uses, so all three scale with M (ALBERT, Lan et al., 2019, Table 4: a BERT-base shape holds
108M parameters not shared, 31M all-shared). Activations follow the computation: every position
runs its layer on its own input and saves its own intermediate results, whichever set it uses, so
they scale with N and are the same shared or not. For the same reason a shared model computes as
much as the unshared one: ALBERT-xxlarge has two thirds of BERT-large's parameters (222.6M against
334.6M as counted here; the paper prints 235M and 334M) and trains about 3 times slower
(``minishare.analysis.flops`` counts 6.9 times the FLOPs per token).

Time is measured, not asserted: ``step_time`` and ``depth_sweep`` report medians in seconds, which
depend on the machine; compare them as ratios. Models to be compared are timed back to back
(``interleaved_step_times``): one step of each in turn, round after round, so that a change in the
machine's load reaches all of them alike. Timed one after the other instead, on a machine shared
with other work, two identical computations can differ by more than 10%.

What the graph keeps alive is what it saves: an op records its computed inputs as data-less
nodes (``minishare.autograd``), so an intermediate result that no op saved is freed as soon as
the forward pass moves on, as in PyTorch; ``activations`` counts what stays.
"""
import contextlib
import statistics
import time

from minishare import backend, optim
from minishare.analysis.params import count_parameters
from minishare.checks import is_int
from minishare.tensor import no_grad


# --- counting arrays -------------------------------------------------------------------------------
def _nbytes(arrays):
    """Bytes of ``arrays``, each distinct array object once."""
    distinct = {id(a): a for a in arrays}
    return sum(int(a.nbytes) for a in distinct.values())


def parameter_bytes(model):
    """Bytes of the model's weights; ``model.parameters()`` yields a shared tensor once."""
    return _nbytes(p.data for p in model.parameters())


def gradient_bytes(model):
    """Bytes of the gradients present (``.grad`` of each distinct parameter, once)."""
    return _nbytes(p.grad for p in model.parameters() if p.grad is not None)


def optimizer_state_bytes(optimizer):
    """Bytes of the arrays in ``optimizer.state`` (keyed by parameter, so one state per distinct
    tensor); numbers such as Adam's step count are not arrays and are left out."""
    return _nbytes(value for state in optimizer.state.values() for value in state.values()
                   if backend.is_array(value))


def _buffer(array):
    """(address, bytes) of the memory ``array`` keeps alive. A view (a reshape, a transpose, a
    slice) holds its base's whole buffer, so it stands for that buffer: its root ``.base``. Two
    arrays alive at once share an address only if they share memory."""
    while backend.is_array(getattr(array, "base", None)):
        array = array.base
    data = array.data             # a device pointer (CuPy, strict) or a host buffer (NumPy)
    address = data.ptr if hasattr(data, "ptr") else array.ctypes.data
    return address, int(array.nbytes)


def saved_arrays(loss):
    """Every backend array saved for backward in the graph that produced ``loss``: the attributes
    of each Function (``_ctx``) reached from ``loss`` through ``_ctx.inputs``, and the arrays in
    tuple or list attributes (an index). Each Function is visited once."""
    seen, stack = set(), [loss]
    while stack:
        ctx = stack.pop()._ctx
        if ctx is None or id(ctx) in seen:
            continue
        seen.add(id(ctx))
        stack.extend(ctx.inputs)
        for name, value in vars(ctx).items():
            if name == "inputs":                     # Tensors, walked above, not saved arrays
                continue
            for item in value if isinstance(value, (tuple, list)) else (value,):
                if backend.is_array(item):
                    yield item


def activation_bytes(loss, exclude=()):
    """Bytes of the distinct buffers saved for backward in the graph of ``loss`` (see
    ``saved_arrays``), leaving out those of ``exclude`` (arrays, e.g. the parameters, which a
    Linear saves to multiply the gradient by but which exist without the graph)."""
    excluded = {_buffer(a)[0] for a in exclude}
    buffers = dict(_buffer(a) for a in saved_arrays(loss))       # address -> bytes
    return sum(n for address, n in buffers.items() if address not in excluded)


# --- measuring without side effects ----------------------------------------------------------------
@contextlib.contextmanager
def _restored(model, optimizer):
    """Measure, then put back every parameter's value and gradient, the optimizer's state and the
    model's mode: measuring trains nothing. Possible because ``Optimizer.step`` assigns new arrays
    (``p.data = ...``) instead of writing into the old ones."""
    params = [(p, p.data, p.grad) for p in model.parameters()]
    state = {p: dict(s) for p, s in optimizer.state.items()}
    training = model.training
    try:
        yield
    finally:
        for p, data, grad in params:
            p.data, p.grad = data, grad
        optimizer.state = state
        model.train(training)


def memory_breakdown(model, optimizer, loss_fn):
    """Bytes held by one training step of ``model``: ``loss = loss_fn(model)`` (a scalar Tensor,
    on one fixed batch), ``loss.backward()``, ``optimizer.step()``.

    Returns ``{"parameters", "gradients", "optimizer", "activations", "total"}`` in bytes
    (ints; see the module docstring for what each counts and why sharing shrinks all but
    activations). Activations are the distinct buffers saved by the graph, parameters excluded;
    the gradients of intermediate results, which exist only while ``backward`` runs, are not
    counted. The optimizer's state is read after the step (it is created by the first one). The
    model's weights, gradients and mode and the optimizer's state are restored afterwards.
    """
    with _restored(model, optimizer):
        model.zero_grad()
        loss = loss_fn(model)
        activations = activation_bytes(loss, exclude=[p.data for p in model.parameters()])
        loss.backward()
        gradients = gradient_bytes(model)
        optimizer.step()
        state = optimizer_state_bytes(optimizer)
    result = {"parameters": parameter_bytes(model), "gradients": gradients, "optimizer": state,
              "activations": activations}
    result["total"] = sum(result.values())
    return result


def _median_seconds(fn, repeats, warmup):
    """Median wall-clock seconds of ``fn()`` over ``repeats`` runs, after ``warmup`` untimed runs
    (the first runs pay for allocations and, on a GPU, kernel compilation)."""
    for _ in range(warmup):
        fn()
    backend.synchronize()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        backend.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def step_time(model, loss_fn, optimizer, repeats=5, warmup=1):
    """Median seconds of a training step and of inference for ``model``.

    ``train``      zero_grad, ``loss_fn(model).backward()``, ``optimizer.step()``, in train mode
    ``inference``  ``loss_fn(model)`` alone under ``no_grad`` (no graph is recorded), in eval mode

    Each is run ``warmup`` times untimed, then ``repeats`` times timed. The steps do change the
    weights while timing; weights, gradients, optimizer state and mode are restored afterwards.
    Returns ``{"train": seconds, "inference": seconds}``.
    """
    for name, value, low in (("repeats", repeats, 1), ("warmup", warmup, 0)):
        if not is_int(value) or value < low:
            raise ValueError(f"step_time: {name} must be an int >= {low}, got {value!r}")

    def train_step():
        optimizer.zero_grad()
        loss_fn(model).backward()
        optimizer.step()

    def inference():
        with no_grad():
            loss_fn(model)

    with _restored(model, optimizer):
        model.train()
        train = _median_seconds(train_step, repeats, warmup)
        model.eval()
        inference = _median_seconds(inference, repeats, warmup)
    return {"train": train, "inference": inference}


def interleaved_step_times(setups, repeats=5, warmup=1, inference=False):
    """Seconds of training steps of several models measured back to back: each round runs one
    step of every model in turn (the order reversed every other round), so a change in the
    machine's load during the measurement reaches every model alike, and a ratio of two models'
    times is taken within a round (``paired_ratios``).

    ``setups``: name -> (model, loss_fn, optimizer); a step is zero_grad,
    ``loss_fn(model).backward()``, ``optimizer.step()``, in train mode; with ``inference``, it is
    ``loss_fn(model)`` alone under ``no_grad``, in eval mode. ``warmup`` untimed rounds come first. Returns {name: {"wall": [seconds per round], "cpu": [...]}}: "wall" is the clock
    (``time.perf_counter``), "cpu" the CPU time of this process (``time.process_time``), which
    other processes on a shared machine slow less. Weights, gradients, optimizer state and mode
    are restored afterwards."""
    if not setups:
        raise ValueError("interleaved_step_times needs at least one (model, loss_fn, optimizer)")
    for name, value, low in (("repeats", repeats, 1), ("warmup", warmup, 0)):
        if not is_int(value) or value < low:
            raise ValueError(f"interleaved_step_times: {name} must be an int >= {low}, got {value!r}")
    times = {name: {"wall": [], "cpu": []} for name in setups}
    with contextlib.ExitStack() as stack:
        for model, _, optimizer in setups.values():
            stack.enter_context(_restored(model, optimizer))
            model.train(not inference)
        for round_ in range(warmup + repeats):
            order = list(setups) if round_ % 2 == 0 else list(setups)[::-1]
            for name in order:
                model, loss_fn, optimizer = setups[name]
                wall, cpu = time.perf_counter(), time.process_time()
                if inference:
                    with no_grad():
                        loss_fn(model)
                else:
                    optimizer.zero_grad()
                    loss_fn(model).backward()
                    optimizer.step()
                backend.synchronize()
                if round_ >= warmup:
                    times[name]["wall"].append(time.perf_counter() - wall)
                    times[name]["cpu"].append(time.process_time() - cpu)
    return times


def paired_ratios(times, numerator, denominator, clock="cpu"):
    """Per-round ratios of two models' step times from ``interleaved_step_times``: the time of
    ``numerator`` over that of ``denominator`` measured in the same round."""
    return [a / b for a, b in zip(times[numerator][clock], times[denominator][clock])]


# --- shared against not shared, as the model gets deeper ------------------------------------------
def _adamw(model):
    return optim.AdamW(model.parameters())


def depth_sweep(make_model, depths, loss_fn, sharings=("not-shared", "all-shared"),
                make_optimizer=_adamw, repeats=3, warmup=1):
    """Parameters, memory and time against depth N, for each sharing strategy.

    ``make_model(N, sharing)`` builds a model with N layer positions (seed inside it for
    reproducible weights); ``loss_fn(model)`` returns its scalar loss on one fixed batch (the same
    for every model, so the comparison is at equal input); ``make_optimizer(model)`` builds the
    optimizer (AdamW by default).

    Returns ``{sharing: [row for each N in depths]}``, each row a dict::

        name, sharing, depth        "all-shared, N=4", the strategy, N
        n_parameters                distinct trainable numbers (``count_parameters``)
        parameters, gradients, optimizer, activations, total    bytes (``memory_breakdown``)
        train, inference            median wall-clock seconds
        times                       {"train": {"wall": [...], "cpu": [...]}, "inference": {...}}:
                                    every round of ``interleaved_step_times``

    At each depth the strategies' models are timed back to back (``interleaved_step_times``), so
    ``paired_ratios({s: rows[i]["times"]["train"] for s, rows in sweep.items()}, "all-shared",
    "not-shared")`` compares them at depth i within each round. The figures take the rows as
    they are::

        sweep = depth_sweep(make_model, depths, loss_fn)
        memory_figures.plot_step_time(depths, sweep)
        params_figures.plot_params_vs(depths, {s: [r["n_parameters"] for r in rows] for s, rows in sweep.items()},
                                      "layer positions N", "Parameters vs depth")
        memory_figures.plot_memory([(r["name"], r) for rows in sweep.values() for r in rows])
    """
    sweep = {sharing: [] for sharing in sharings}
    for depth in depths:
        setups = {}
        for sharing in sharings:
            model = make_model(depth, sharing)
            optimizer = make_optimizer(model)
            row = {"name": f"{sharing}, N={depth}", "sharing": sharing, "depth": depth,
                   "n_parameters": count_parameters(model)}
            row.update(memory_breakdown(model, optimizer, loss_fn))
            setups[sharing] = (model, loss_fn, optimizer)
            sweep[sharing].append(row)
        times = {mode: interleaved_step_times(setups, repeats, warmup, inference=mode == "inference")
                 for mode in ("train", "inference")}
        for sharing in sharings:
            row = sweep[sharing][-1]
            row["times"] = {mode: times[mode][sharing] for mode in times}
            row.update({mode: statistics.median(times[mode][sharing]["wall"]) for mode in times})
    return sweep


def profile_step(model, loss_fn, optimizer, steps=3):
    """Where a training step's time goes, by Python's profiler: CPU seconds per step in the sum
    rule of reverse mode (``autograd.accumulate``, which every gradient goes through: the gradient
    of a tensor used k times is the first one and k - 1 additions), in ``optimizer.step``
    and in all. The profiler slows Python
    calls, so compare the parts as shares of the total, not with unprofiled times. One untimed
    step comes first; the model and the optimizer are restored afterwards."""
    import cProfile
    import pstats

    def step():
        optimizer.zero_grad()
        loss_fn(model).backward()
        optimizer.step()
    with _restored(model, optimizer):
        model.train()
        step()
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
        for _ in range(steps):
            step()
        profiler.disable()
    table = pstats.Stats(profiler).stats          # (file, line, function) -> (.., .., own, cumulative, ..)

    def cumulative(file_end, function):
        return sum(v[3] for (file, _, name), v in table.items()
                   if name == function and file.replace("\\", "/").endswith(file_end))
    return {"accumulate": cumulative("minishare/autograd.py", "accumulate") / steps,
            "optimizer": cumulative("minishare/optim/optimizer.py", "step") / steps,
            "total": pstats.Stats(profiler).total_tt / steps}
