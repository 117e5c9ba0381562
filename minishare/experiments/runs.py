"""Training runs with a cache: each run lives in ``OUT/runs/<name>/`` (checkpoint, history,
settings), and an identical request later loads it instead of training again. Experiments that
need the same run (the layer-wise figure and the convergence curves both use the trained
not-shared and all-shared ALBERTs) therefore train it once.

``train_all`` trains many runs at once in worker processes, one BLAS thread each: the models are
small, so one process per core does more work per second than one process using every core for
its small matrix products. A worker whose parent is killed stops too (``stop_with_parent``).
"""
import contextlib
import csv
import json
import multiprocessing
import os
import signal
import threading
import time

from minishare import checkpoint
from minishare.checks import is_int
from minishare.errors import InvalidValue
from minishare.run.training import run_training
from minishare.files import atomic_write

# Set in the environment the workers start with: OpenBLAS and OpenMP read these once, when NumPy
# loads, so setting them inside a worker after its first import would be too late.
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _request_text(request):
    return json.dumps(request, sort_keys=True, default=str)


def is_cached(out, name, request):
    """True when ``out/runs/name`` holds a finished run of exactly this request."""
    marker = os.path.join(out, "runs", name, "request.json")
    if not os.path.exists(marker):
        return False
    with open(marker) as f:
        return f.read() == _request_text(request)


def cached_run(out, name, progress=True, **request):
    """``run_training(**request)`` into ``out/runs/name``, or its cached result when the same
    request finished before. Returns {"model", "history", "final"}."""
    folder = os.path.join(out, "runs", name)
    if is_cached(out, name, request):
        with open(os.path.join(folder, "final.json")) as f:
            final = json.load(f)
        return {"model": checkpoint.load(os.path.join(folder, "checkpoint.npz")),
                "history": read_history(os.path.join(folder, "history.csv")), "final": final}
    result = run_training(out=folder, progress=progress, **request)
    with atomic_write(os.path.join(folder, "final.json")) as f:
        json.dump(result["final"], f, indent=1)
    with atomic_write(os.path.join(folder, "request.json")) as f:   # last: a crashed run is never taken as finished
        f.write(_request_text(request))
    return result


def train_all(out, requests, jobs=1, progress=True):
    """Train every run of ``requests`` ({name: run_training keyword arguments}) that is not cached
    yet, ``jobs`` at a time, each in its own process with one BLAS thread. With ``jobs=1`` the runs
    train one after another in this process. Returns {name: final metrics} for every request."""
    if not is_int(jobs) or jobs < 1:
        raise InvalidValue(f"jobs must be a positive int, got {jobs!r}")
    missing = [name for name, request in requests.items() if not is_cached(out, name, request)]
    if progress and requests:
        print(f"[train] {len(requests) - len(missing)} of {len(requests)} runs cached; "
              f"training {len(missing)} with {jobs} job(s)", flush=True)
    if jobs == 1 or len(missing) <= 1:
        for name in missing:
            cached_run(out, name, progress=progress, **requests[name])
    else:
        with worker_pool(min(jobs, len(missing))) as pool:
            tasks = [(out, name, requests[name]) for name in missing]
            for done, name in enumerate(pool.imap_unordered(_train_one, tasks), 1):
                if progress:
                    print(f"[train] {done}/{len(missing)} {name}", flush=True)
    finals = {}
    for name in requests:
        with open(os.path.join(out, "runs", name, "final.json")) as f:
            finals[name] = json.load(f)
    return finals


def estimate(requests, jobs=1, probe_steps=4):
    """About how many seconds training ``requests`` will take with ``jobs`` processes, measured
    here: each distinct model and task trains ``probe_steps`` steps in one worker process (one BLAS
    thread, as the training workers have), and every request's steps are charged that model's
    median step time. Setup and held-out evaluations are not counted, and parallel jobs are assumed
    to keep their cores busy. Returns (seconds, number of distinct models probed)."""
    def probe_of(request):
        return {**request, "seed": 0, "steps": probe_steps, "eval_every": probe_steps}
    probes = {_request_text(probe_of(r)): probe_of(r) for r in requests.values()}
    with worker_pool(1) as pool:
        per_step = dict(zip(probes, pool.map(_probe, list(probes.values()))))
    total = sum(r["steps"] * per_step[_request_text(probe_of(r))] for r in requests.values())
    return total / min(jobs, max(len(requests), 1)), len(probes)


def _probe(request):
    """Worker: the median step time of a few steps of one request, trained in a temporary folder."""
    import statistics
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        history = run_training(out=folder, progress=False, **request)["history"]
    return statistics.median(row["step_time"] for row in history[1:])


def _train_one(task):
    """Worker: one cached run, silently (progress bars of parallel runs would interleave)."""
    out, name, request = task
    try:
        cached_run(out, name, progress=False, **request)
    except Exception as error:
        raise RuntimeError(f"training run {name!r} failed: {error!r}") from None
    return name


@contextlib.contextmanager
def worker_pool(processes):
    """A pool of ``processes`` fresh interpreters ("spawn", not "fork": a forked worker would
    inherit this process's already loaded BLAS and its threads) started with ONE_THREAD in their
    environment, so NumPy loads single-threaded in each. This process's own BLAS, loaded already,
    is not affected."""
    with _environment(ONE_THREAD), multiprocessing.get_context("spawn").Pool(
            processes, initializer=stop_with_parent, initargs=(os.getpid(),)) as pool:
        yield pool


def stop_with_parent(parent, every=1.0):
    """Worker initializer: when the process that started this worker is gone (killed, so it could
    not stop its pool), ask this worker to stop as Ctrl-C would (SIGTERM: the run saves its
    checkpoint after the current step and ends), instead of training on for minutes unwatched."""
    def watch():
        while os.getppid() == parent:
            time.sleep(every)
        os.kill(os.getpid(), signal.SIGTERM)
    threading.Thread(target=watch, daemon=True, name="stop-with-parent").start()


@contextlib.contextmanager
def _environment(values):
    """Set environment variables for the block (the spawned workers inherit them), then restore."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def read_history(path):
    """history.csv -> list of dicts of floats (empty cells dropped)."""
    with open(path, newline="") as f:
        return [{k: float(v) for k, v in row.items() if v != ""} for row in csv.DictReader(f)]
