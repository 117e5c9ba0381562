"""Training runs with a cache: each run lives in ``OUT/runs/<name>/`` (checkpoint, history,
settings), and an identical request later loads it instead of training again. Experiments that
need the same run (the layer-wise figure and the convergence curves both use the trained
not-shared and all-shared ALBERTs) therefore train it once.

``train_all`` trains many runs at once in worker processes, one BLAS thread each: the models are
small, so one process per core does more work per second than one process using every core for
its small matrix products. A worker whose parent is killed stops too (``stop_with_parent``).

Stopping: the first SIGINT (Ctrl-C), SIGTERM or SIGHUP asks every run in progress to stop after
its step, saved (each worker runs in a session of its own, so a signal to the terminal's whole
process group or to ``kill -- -PGID`` reaches this process only, and each worker gets exactly one
SIGTERM from here), waits for them and ends with one ``TrainingInterrupted`` that names them; a
second signal stops them at once, keeping their last checkpoints. Running the same requests again
resumes each interrupted run from its checkpoint (``cached_run``), and the step times ``estimate``
measured are kept in ``OUT/step_times.json``, so a rerun does not time them again.
"""
import contextlib
import csv
import json
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time

from minishare import checkpoint, safeio
from minishare.errors import InvalidValue, MinishareError
from minishare.run import folder as run_folder
from minishare.run.errors import TrainingInterrupted
from minishare.run.training import STOP_SIGNALS, run_training
from minishare.files import atomic_write
from minishare.train import stop_requests

MAX_JOBS = 1024      # processes at once: far more than any machine's cores, far fewer than its pids
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
    request finished before; a run of the same request that was interrupted continues from its
    checkpoint. Returns {"model", "history", "final"}."""
    folder = os.path.join(out, "runs", name)
    if is_cached(out, name, request):
        with open(os.path.join(folder, "final.json")) as f:
            final = json.load(f)
        return {"model": checkpoint.load(os.path.join(folder, "checkpoint.npz")),
                "history": read_history(os.path.join(folder, "history.csv")), "final": final}
    result = None
    if interrupted(folder, request):
        try:
            result = run_training(out=folder, progress=progress, resume=True, **request)
        except (checkpoint.CheckpointError, InvalidValue) as err:     # not its run's any more
            print(f"[train] {name}: cannot continue from its checkpoint ({err}); training it again",
                  flush=True)
    if result is None:
        result = run_training(out=folder, progress=progress, **request)
    with atomic_write(os.path.join(folder, "final.json")) as f:
        json.dump(result["final"], f, indent=1)
    with atomic_write(os.path.join(folder, "request.json")) as f:   # last: a crashed run is never taken as finished
        f.write(_request_text(request))
    return result


def interrupted(folder, request):
    """True when ``folder`` holds a checkpoint of a run of exactly ``request`` that did not finish
    (its arguments, as config.json records them, are the request's): it can continue."""
    try:
        saved = run_folder.saved_run(folder)["arguments"]
    except (OSError, MinishareError):
        return False
    return all(name in saved and _request_text(saved[name]) == _request_text(value)
               for name, value in request.items())


def check_jobs(jobs):
    """``jobs`` as a number of worker processes, refused naming the limit."""
    return safeio.integer(jobs, "jobs", low=1, high=MAX_JOBS)


def train_all(out, requests, jobs=1, progress=True):
    """Train every run of ``requests`` ({name: run_training keyword arguments}) that is not cached
    yet, ``jobs`` at a time, each in its own process with one BLAS thread. With ``jobs=1`` the runs
    train one after another in this process. Returns {name: final metrics} for every request.
    A signal stops them saved (see the module) with one ``TrainingInterrupted``."""
    check_jobs(jobs)
    missing = [name for name, request in requests.items() if not is_cached(out, name, request)]
    if progress and requests:
        partial = sum(interrupted(os.path.join(out, "runs", name), requests[name]) for name in missing)
        print(f"[train] {len(requests) - len(missing)} of {len(requests)} runs cached; "
              f"training {len(missing)} with {jobs} job(s)"
              + (f", {partial} of them continuing from their checkpoints" if partial else ""), flush=True)
    if jobs == 1 or len(missing) <= 1:
        for name in missing:
            try:
                cached_run(out, name, progress=progress, **requests[name])
            except TrainingInterrupted as stop:
                raise _interrupted(stop.signal, [stop], out) from None
    else:
        with worker_pool(min(jobs, len(missing))) as pool:
            tasks = [(out, name, requests[name]) for name in missing]
            try:
                for done, name in enumerate(pool.imap_unordered(_train_one, tasks), 1):
                    if progress:
                        print(f"[train] {done}/{len(missing)} {name}", flush=True)
            except Stopped as stop:
                raise _interrupted(stop.signal, stop.interruptions, out) from None
    finals = {}
    for name in requests:
        with open(os.path.join(out, "runs", name, "final.json")) as f:
            finals[name] = json.load(f)
    return finals


def _interrupted(sig, interruptions, out):
    """The one error of a ``train_all`` stopped by the signal ``sig``: which runs saved at which
    step (the first few, and how many), and that running the same requests again continues."""
    saved = [f"{os.path.basename(os.path.normpath(stop.out))} at step {stop.step}"
             for stop in interruptions if stop.step is not None]
    shown = ", ".join(saved[:4]) + (f" and {len(saved) - 4} more" if len(saved) > 4 else "")
    return TrainingInterrupted(sig, None, out, f"interrupted by {sig.name}: "
                               + (f"the runs in progress saved ({shown})" if saved else "no run had saved yet")
                               + "; rerunning the same command continues them")


def estimate(requests, jobs=1, probe_steps=4, out=None, progress=False):
    """About how many seconds training ``requests`` will take with ``jobs`` processes, measured
    here: each distinct model and task trains ``probe_steps`` steps in one worker process (one BLAS
    thread, as the training workers have), and every request's steps are charged that model's
    median step time. Setup and held-out evaluations are not counted, and parallel jobs are assumed
    to keep their cores busy. With ``out`` the step times are kept in ``out/step_times.json`` and
    a model timed before is not timed again; with ``progress`` a line says so before any timing.
    Returns (seconds, number of distinct models probed)."""
    def probe_of(request):
        return {**request, "seed": 0, "steps": probe_steps, "eval_every": probe_steps}
    probes = {_request_text(probe_of(r)): probe_of(r) for r in requests.values()}
    path = None if out is None else os.path.join(out, "step_times.json")
    per_step = _step_times(path)
    todo = [key for key in probes if key not in per_step]
    if todo and progress:
        print(f"[reproduce] timing {len(todo)} model(s) on this machine, {probe_steps} steps each, to "
              f"estimate the training time{f' ({len(probes) - len(todo)} timed before)' if len(todo) < len(probes) else ''}",
              flush=True)
    if todo:
        with worker_pool(1) as pool:
            try:
                for key, seconds in zip(todo, pool.map(_probe, [probes[key] for key in todo])):
                    per_step[key] = seconds
            except Stopped as stop:
                raise TrainingInterrupted(stop.signal, None, out, f"interrupted by {stop.signal.name} while "
                                          "timing; rerunning the same command continues") from None
        if path is not None:
            with atomic_write(path) as f:
                json.dump(per_step, f, indent=1)
    total = sum((r["steps"] - _steps_done(out, name, r)) * per_step[_request_text(probe_of(r))]
                for name, r in requests.items())
    return total / min(jobs, max(len(requests), 1)), len(probes)


def _steps_done(out, name, request):
    """The updates an interrupted run of ``request`` in ``out/runs/name`` saved (its history is
    written with its checkpoint), which continuing it does not pay again; 0 for any other."""
    folder = None if out is None else os.path.join(out, "runs", name)
    if folder is None or not interrupted(folder, request):
        return 0
    try:
        return min(len(read_history(os.path.join(folder, "history.csv"))), request["steps"])
    except (OSError, ValueError):
        return 0


def estimate_here(trainers, probe_steps=4):
    """About how many seconds the training that experiments do in their own process will take
    (``Experiment.trains_here``: {label: (updates, make)}), timed in this process: each kind
    trains ``probe_steps`` updates (the first, which pays for warming up, not counted) and is
    charged its median step time for all its updates."""
    import statistics
    total = 0.0
    for updates, make in trainers.values():
        trainer = make(probe_steps)
        trainer.train()
        total += updates * statistics.median(row["step_time"] for row in trainer.history[1:])
    return total


def _step_times(path):
    """{probe: seconds a step} kept from earlier timings (none when missing or unreadable)."""
    try:
        kept = safeio.load_json(path, limit=1 << 20) if path is not None and os.path.exists(path) else {}
    except (OSError, MinishareError):
        return {}
    return {k: v for k, v in kept.items() if isinstance(v, float) and v > 0} if isinstance(kept, dict) else {}


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
    except TrainingInterrupted:
        raise
    except Exception as error:
        raise RuntimeError(f"training run {name!r} failed: {error!r}") from None
    return name


class Stopped(Exception):
    """A signal stopped the workers (``Workers``); ``interruptions``: the TrainingInterrupted
    each interrupted task ended with."""

    def __init__(self, signal, interruptions):
        super().__init__(f"stopped by {signal.name}")
        self.signal, self.interruptions = signal, interruptions


class Workers:
    """``processes`` tasks at a time, each in a fresh interpreter of its own ("spawn", not "fork":
    a forked worker would inherit this process's already loaded BLAS and its threads) started
    with ONE_THREAD in its environment, so NumPy loads single-threaded in each. A worker is asked
    to stop with one SIGTERM (see the module) and listens to nothing else: it starts with SIGINT
    and SIGHUP ignored, and leaves this process's group first thing (``_work``). One process a
    task, so no idle worker waits on a queue a stopped pool no longer serves."""

    def __init__(self, processes):
        self.processes = processes

    def map(self, function, tasks):
        """[function(task) for task in tasks], in order."""
        results = dict(self._run(function, list(tasks)))
        return [results[i] for i in range(len(results))]

    def imap_unordered(self, function, tasks):
        """function(task) for each task, as they finish."""
        return (result for _, result in self._run(function, list(tasks)))

    def _run(self, function, tasks):
        context, waiting, running = multiprocessing.get_context("spawn"), list(enumerate(tasks)), {}
        interruptions, failure, relayed = [], None, False
        with stop_requests(STOP_SIGNALS) as stop:
            try:
                while waiting or running:
                    while waiting and len(running) < self.processes and not stop and failure is None:
                        index, task = waiting.pop(0)
                        running[index] = self._start(context, function, task)
                    if (stop or failure is not None) and not relayed:
                        self._relay(running)        # once: a second SIGTERM would stop them mid-step
                        relayed = True
                    ready = multiprocessing.connection.wait([conn for _, conn in running.values()], timeout=0.5)
                    for index in [i for i, (_, conn) in running.items() if conn in ready]:
                        process, conn = running.pop(index)
                        kind, value = self._result(process, conn)
                        if kind == "done":
                            yield index, value
                        elif kind == "lost" and stop:
                            pass                # SIGTERM before its run could handle it: nothing saved
                        elif isinstance(value, TrainingInterrupted) and value.step is not None:
                            interruptions.append(value)
                        elif isinstance(value, KeyboardInterrupt):
                            pass                # stopped at once before its first save
                        elif failure is None:
                            failure = value
                    if not running and (stop or failure is not None):
                        break
            except KeyboardInterrupt:            # a second signal: stop them at once
                self._relay(running)
                for process, conn in running.values():
                    process.join()
                raise
        if failure is not None:
            raise failure
        if stop:
            raise Stopped(stop.signal, interruptions)

    @staticmethod
    def _start(context, function, task):
        receive, send = context.Pipe(duplex=False)
        process = context.Process(target=_work, args=(send, function, task, os.getpid()), daemon=True)
        main = threading.current_thread() is threading.main_thread()     # (signals are the main thread's)
        ignored = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGHUP)} if main else {}
        try:                # an ignored signal stays ignored across exec: the worker inherits it
            with _environment(ONE_THREAD):
                process.start()
        finally:
            for s, handler in ignored.items():
                signal.signal(s, handler)
        send.close()
        return process, receive

    @staticmethod
    def _relay(running):
        for process, _ in running.values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGTERM)

    @staticmethod
    def _result(process, conn):
        try:
            kind, value = conn.recv()
        except (EOFError, OSError):
            process.join()
            kind, value = "lost", RuntimeError(f"a worker process ended without a result (exit status "
                                                f"{process.exitcode})")
        process.join()
        conn.close()
        return kind, value


def _work(send, function, task, parent):
    """Worker: ``function(task)`` sent back as ("done", result) or ("error", exception)."""
    # A session of its own: were the parent's group's SIGTERM to reach it besides the one the parent
    # relays, the second could land after its run saved and stopped listening, kill it there, and
    # lose its result and leave its lock. (Before this line, the group's SIGINT and SIGHUP are
    # ignored here, and its SIGTERM ends a worker that has not started its run: nothing is lost.)
    os.setsid()
    stop_with_parent(parent)
    try:
        message = ("done", function(task))
    except BaseException as error:      # noqa: B902 (a KeyboardInterrupt too: it is sent, not lost)
        message = ("error", error)
    try:
        send.send(message)
    except Exception as error:          # an unpicklable result or exception: say what it was
        send.send(("error", RuntimeError(f"{message[1]!r} (it could not be sent back: {error})")))


@contextlib.contextmanager
def worker_pool(processes):
    """``Workers(processes)``: fresh single-threaded interpreters, ``processes`` at a time."""
    yield Workers(check_jobs(processes))


def stop_with_parent(parent, every=1.0):
    """In a worker: when the process that started it is gone (killed, so it could not stop its
    workers), ask this worker to stop as Ctrl-C would (SIGTERM: the run saves its
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
