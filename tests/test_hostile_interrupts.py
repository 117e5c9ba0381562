"""Signals at any moment (issue 34): Ctrl-C in the parallel training of ``reproduce`` saves every run
in progress and a rerun continues them; SIGHUP is handled like SIGTERM; every exception a worker
can raise crosses the process boundary. Children start with the signals at their defaults, are
killed if a test fails or times out, and nothing asserts on time."""
import json
import os
import pickle
import signal
import subprocess
import sys
import time

import pytest

from minishare import checkpoint
from minishare.checkpoint import CheckpointError
from minishare.errors import InvalidType, InvalidValue, MissingPackage
from minishare.experiments import runs
from minishare.run.errors import BadArgument, RunInUse, TrainingDiverged, TrainingInterrupted
from conftest import default_signals
from test_run_workflow import one_line, run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STARTED = []


def start(argv, **kwargs):
    process = subprocess.Popen([sys.executable, *argv], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, preexec_fn=default_signals,
                               env={**os.environ, "PYTHONPATH": ROOT, "OPENBLAS_NUM_THREADS": "1"}, **kwargs)
    STARTED.append(process)
    return process


@pytest.fixture(autouse=True)
def no_process_left_behind():
    yield
    while STARTED:
        process = STARTED.pop()
        if process.poll() is None:
            with_group = os.getpgid(process.pid) == process.pid
            (os.killpg if with_group else os.kill)(process.pid, signal.SIGKILL)
            process.communicate()


def wait_for(condition, process, what, seconds=300):
    deadline = time.monotonic() + seconds
    while not condition():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{what} never happened"
        time.sleep(0.05)


def saved_step(folder):
    path = os.path.join(folder, "checkpoint.npz")
    try:
        return checkpoint.load(path, with_training_state=True)[1]["step"]
    except (OSError, CheckpointError):
        return None


@pytest.mark.parametrize("error", [
    TrainingInterrupted(signal.SIGINT, 7, "runs/x"), TrainingInterrupted(signal.SIGTERM, None, "runs", "stopped"),
    BadArgument("steps", "must be a positive integer", 0), RunInUse("in use"), TrainingDiverged("diverged"),
    CheckpointError("bad file"), InvalidValue("bad"), InvalidType("bad type"), MissingPackage("pip install x")])
def test_every_error_a_worker_can_raise_crosses_the_process_boundary(error):
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error) and str(back) == str(error)
    assert vars(back) == vars(error)


REQUEST = dict(task="copy", overrides=dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                           intermediate_size=32), batch_size=4, steps=100_000, eval_every=1000,
               save_every=5, lr=1e-3)
DRIVER = """
import json, sys
from minishare.experiments import runs
from minishare.run.errors import TrainingInterrupted
try:
    runs.train_all(sys.argv[1], json.loads(sys.argv[2]), jobs=2, progress=False)
except TrainingInterrupted as stop:
    print(stop, file=sys.stderr)
    sys.exit(128 + stop.signal)
"""


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGHUP, signal.SIGTERM])
def test_ctrl_c_in_parallel_training_saves_every_run_and_a_rerun_continues_them(number, tmp_path):
    """The terminal's signal reaches the whole process group; the runs in progress save after their
    step and the parent ends in one line, never a hang. So does a SIGTERM to the whole group
    (``kill -- -PGID``, a service manager stopping the job)."""
    out = str(tmp_path)
    requests = {f"copy-s{seed}": {**REQUEST, "seed": seed} for seed in (0, 1)}
    process = start(["-c", DRIVER, out, json.dumps(requests)], start_new_session=True)
    folders = [os.path.join(out, "runs", name) for name in requests]
    wait_for(lambda: all(saved_step(f) for f in folders), process, "a first checkpoint of both runs")
    os.killpg(process.pid, number)
    try:
        _, err = process.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        pytest.fail("train_all hung after the signal")
    assert process.returncode == 128 + number, err
    line = one_line(err)
    assert f"interrupted by {signal.Signals(number).name}" in line and "rerunning the same command continues" in line
    steps = {f: saved_step(f) for f in folders}
    assert all(step and f"{os.path.basename(f)} at step {step}" in line for f, step in steps.items()), (line, steps)
    assert not any(os.path.exists(os.path.join(f, ".lock")) for f in folders)
    # the rerun continues each run from its checkpoint: its first rows are the saved ones, timings included
    first = {f: checkpoint.load(os.path.join(f, "checkpoint.npz"), with_training_state=True)[1]["history"]
             for f in folders}
    shorter = {name: {**request, "steps": 0} for name, request in requests.items()}     # not the same request
    assert not any(runs.interrupted(os.path.join(out, "runs", n), r) for n, r in shorter.items())
    assert all(runs.interrupted(os.path.join(out, "runs", n), r) for n, r in requests.items())
    name, request = next(iter(requests.items()))
    folder = os.path.join(out, "runs", name)
    result = _resume_a_little(out, name, request, steps[folder])
    assert result[:steps[folder]] == first[folder]
    assert len(result) == steps[folder] + 3


def stops_then_lingers(marker):
    """A worker's task that stops at a SIGTERM as a run does (``stop_requests``) and then takes a
    while to end, as a run does when it saves its files and unlocks its folder after its step."""
    from minishare.train import stop_requests
    with stop_requests([signal.SIGTERM]) as stop:
        open(marker, "w").close()
        while not stop:
            time.sleep(0.01)
    time.sleep(2)
    return f"stopped by {stop.signal.name}"


LINGERING = """
import sys
sys.path.insert(0, "tests")
from minishare.experiments.runs import Stopped, worker_pool
from test_hostile_interrupts import stops_then_lingers
with worker_pool(1) as pool:
    try:
        for result in pool.imap_unordered(stops_then_lingers, [sys.argv[1]]):
            print(result)
    except Stopped:
        sys.exit(3)
"""


def test_a_sigterm_to_the_whole_group_reaches_each_worker_once(tmp_path):
    """The parent asks each worker to stop with one SIGTERM. A second, from the group, landing after
    the worker's run stopped listening, would kill it there: its result lost, its folder locked
    (seen in CI: a run that saved at step 19 was missing from the parent's line)."""
    marker = str(tmp_path / "listening")
    process = start(["-c", LINGERING, marker], start_new_session=True)
    wait_for(lambda: os.path.exists(marker), process, "the worker's task to start")
    os.killpg(process.pid, signal.SIGTERM)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 3 and out.split() == ["stopped", "by", "SIGTERM"], (out, err)


def _resume_a_little(out, name, request, step):
    """Continue the interrupted run for 3 more steps in this process (the whole run is long): the
    rerun's path, ``cached_run``, with SIGINT sent to itself after 3 steps."""
    from minishare import train
    real = train.Trainer.train

    def three_more(self, until=None, stop=None, after_step=None):
        return real(self, until=self.step + 3, stop=stop, after_step=after_step)
    train.Trainer.train = three_more
    try:
        runs.cached_run(out, name, progress=False, **request)
    finally:
        train.Trainer.train = real
    history = checkpoint.load(os.path.join(out, "runs", name, "checkpoint.npz"), with_training_state=True)[1]
    return history["history"]


def test_sighup_in_train_saves_and_says_how_to_continue(tmp_path):
    out = tmp_path / "run"
    process = start(["-m", "minishare", "train", "--task", "copy", "-H", "16", "-N", "1", "--batch-size", "4",
                     "--steps", "100000", "--save-every", "5", "--eval-every", "1000", "--no-progress",
                     "--out", str(out)])
    wait_for(lambda: saved_step(str(out)), process, "a first checkpoint")
    process.send_signal(signal.SIGHUP)
    _, err = process.communicate(timeout=300)
    line = one_line(err)
    assert process.returncode == 128 + signal.SIGHUP, err
    assert "interrupted by SIGHUP" in line and "--resume" in line
    assert saved_step(str(out)) == int(line.split("after step ")[1].split(":")[0])


def test_a_timing_is_not_repeated_and_is_announced_first(tmp_path, monkeypatch, capsys):
    probed = []

    class Pool:
        def map(self, fn, probes):
            assert "timing 1 model(s)" in capsys.readouterr().out      # said before it starts
            probed.extend(probes)
            return [0.25 for _ in probes]

    import contextlib
    monkeypatch.setattr(runs, "worker_pool", lambda n: contextlib.nullcontext(Pool()))
    requests = {"a": {**REQUEST, "steps": 8, "seed": 0}, "b": {**REQUEST, "steps": 8, "seed": 1}}
    first = runs.estimate(requests, jobs=1, out=str(tmp_path), progress=True)
    again = runs.estimate(requests, jobs=1, out=str(tmp_path), progress=True)
    assert first == again == (4.0, 1) and len(probed) == 1
    assert "timing" not in capsys.readouterr().out


def test_a_second_signal_just_after_a_checkpoint_lands_names_that_checkpoint(tmp_path, monkeypatch,
                                                                           terminal_sigint):
    """Two signals at once (a SIGTERM to the group reaches a worker twice) can cut a save short
    after its checkpoint was renamed into place: the error must name the step the file holds, the
    one a rerun continues from, not the one saved before it."""
    from minishare.run import training
    real_save = checkpoint.save

    def save(model, path, training_state=None):
        real_save(model, path, training_state)
        if training_state["step"] == 10:                 # both signals land right after the rename
            signal.raise_signal(signal.SIGINT)
            signal.raise_signal(signal.SIGINT)
    monkeypatch.setattr(training.checkpoint, "save", save)
    with pytest.raises(TrainingInterrupted) as stopped:
        runs.cached_run(str(tmp_path), "a", progress=False, **{**REQUEST, "steps": 20, "seed": 0})
    assert saved_step(os.path.join(str(tmp_path), "runs", "a")) == 10
    assert stopped.value.step == 10 and "step 10" in str(stopped.value)


def test_the_estimate_charges_an_interrupted_run_only_the_updates_it_has_left(tmp_path, monkeypatch, terminal_sigint):
    """A run stopped after its fifth update (a real SIGINT, during the save of that step's
    history) continues from there: the estimate charges it 20 - 5 updates, a fresh run all 20."""
    from minishare.run import training
    real_save = training.save_history

    def save_history(history, path):
        real_save(history, path)
        if len(history) == 5:
            signal.raise_signal(signal.SIGINT)
    monkeypatch.setattr(training, "save_history", save_history)
    request = {**REQUEST, "steps": 20, "seed": 0}
    with pytest.raises(TrainingInterrupted):
        runs.cached_run(str(tmp_path), "a", progress=False, **request)
    monkeypatch.setattr(training, "save_history", real_save)

    class Pool:
        def map(self, fn, probes):
            return [0.5 for _ in probes]
    import contextlib
    monkeypatch.setattr(runs, "worker_pool", lambda n: contextlib.nullcontext(Pool()))
    seconds, _ = runs.estimate({"a": request, "b": {**request, "seed": 1}}, jobs=1, out=str(tmp_path))
    assert seconds == (20 - 5) * 0.5 + 20 * 0.5


def test_reproduce_interrupted_says_rerun_not_train_resume(tmp_path, capsys, monkeypatch):
    from minishare.experiments import reproduce

    def interrupted(*args, **kwargs):       # what train_all raises, through reproduce.run
        raise TrainingInterrupted(signal.SIGINT, None, str(tmp_path), "interrupted by SIGINT: the runs in "
                                  "progress saved (a at step 40); rerunning the same command continues them")
    monkeypatch.setattr(reproduce, "run", interrupted)
    status, _, err = run(capsys, "reproduce", "--out", tmp_path)
    line = one_line(err)
    assert status == 130 and "a at step 40" in line and "rerunning the same command continues" in line
    assert "--resume" not in line


@pytest.mark.parametrize("jobs", ["0", "-3", "100000000"])
def test_reproduce_jobs_out_of_range_is_one_line(jobs, tmp_path, capsys):
    status, _, err = run(capsys, "reproduce", "--quick", "--only", "params", "--jobs", jobs, "--out", tmp_path)
    line = one_line(err)
    assert status == 2 and "jobs" in line and "at most 1,024" in line, line


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs Linux's /proc")
@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP])
@pytest.mark.parametrize("delay", [0.0, 0.1, 0.3])
def test_sigterm_or_sighup_while_starting_is_one_line(number, delay, tmp_path):
    """Once the package's imports have begun (NumPy is mapped into the process), plus ``delay``:
    a signal that lands in an import, or in the building of the run, ends in one line with its
    status, never a silent death by the signal. The run is far too long to end on its own."""
    process = start(["-m", "minishare", "train", "--task", "copy", "-H", "16", "-N", "1", "--batch-size", "4",
                     "--steps", "100000", "--no-progress", "--out", str(tmp_path / "run")])
    wait_for(lambda: "numpy" in open(f"/proc/{process.pid}/maps").read(), process, "NumPy's import", 60)
    time.sleep(delay)
    process.send_signal(number)
    _, err = process.communicate(timeout=300)
    assert process.returncode == 128 + number, (process.returncode, err)
    assert f"interrupted by {signal.Signals(number).name}" in one_line(err)
