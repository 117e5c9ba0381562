"""Runs that another run, a stale file or an edited file could destroy, and the command line's
one-line errors (issue 20). Runs are tiny (the copy task, or an LM on the grammar corpus)."""
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from minishare import checkpoint
from minishare.files import atomic_write
from conftest import default_signals
from test_run_workflow import one_line, run     # the CLI in-process, and its one-line errors

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COPY = ["train", "--task", "copy", "-H", "16", "-N", "1", "--batch-size", "4", "--eval-every", "50",
        "--no-progress"]
LM = ["train", "--task", "lm", "--corpus", "grammar", "-H", "16", "-N", "1", "--vocab-size", "60",
      "--seq-len", "16", "--batch-size", "4", "--eval-every", "50", "--no-progress"]


def env():
    return {**os.environ, "PYTHONPATH": ROOT, "OPENBLAS_NUM_THREADS": "1"}


STARTED = []                      # the runs this module started, killed after each test


def start(*argv):
    process = subprocess.Popen([sys.executable, "-m", "minishare", *map(str, argv)], env=env(), cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=default_signals)
    STARTED.append(process)
    return process


@pytest.fixture(autouse=True)
def no_run_left_behind():
    """A test that fails or times out leaves no run training on."""
    yield
    while STARTED:
        process = STARTED.pop()
        if process.poll() is None:
            process.kill()
            process.communicate()


def wait_for(path, process, seconds=120):
    deadline = time.monotonic() + seconds
    while not os.path.exists(path):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def snapshot(folder):
    return {name: (folder / name).read_bytes() for name in sorted(os.listdir(folder))
            if not name.startswith(".")}


# --- the run-folder lock ------------------------------------------------------------------------------
@pytest.fixture
def live_owner():
    """A process that is alive for the test: the owner of a lock that is not stale."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield process.pid
    process.kill()
    process.wait()


def _lock(folder, pid, host=None):
    folder.mkdir(exist_ok=True)
    (folder / ".lock").write_text(json.dumps({"pid": pid, "host": host or socket.gethostname()}))


@pytest.mark.parametrize("mode", [[], ["--overwrite"], ["--resume"]])
def test_a_locked_run_folder_is_refused_naming_its_owner(mode, live_owner, tmp_path, capsys):
    out = tmp_path / "run"
    assert run(capsys, *COPY, "--steps", 2, "--out", out)[0] == 0
    before = snapshot(out)
    _lock(out, live_owner)
    status, _, err = run(capsys, *COPY, "--steps", 4, "--out", out, *mode)
    line = one_line(err)
    assert status == 2 and f"pid {live_owner}" in line and socket.gethostname() in line \
        and str(out / ".lock") in line, line
    assert snapshot(out) == before


def test_a_stale_lock_is_taken_over_and_released(tmp_path, capsys):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    out = tmp_path / "run"
    _lock(out, dead.pid)
    status, _, err = run(capsys, *COPY, "--steps", 2, "--out", out)
    assert status == 0, err
    assert not (out / ".lock").exists()


def test_two_runs_started_together_into_one_folder_one_is_refused(tmp_path):
    out = tmp_path / "run"
    runs = [start(*COPY, "--steps", 150, "--out", out) for _ in range(2)]
    results = [(p.wait(timeout=300), p.communicate()[1]) for p in runs]
    statuses = sorted(status for status, _ in results)
    assert statuses == [0, 2], results
    refused = next(err for status, err in results if status == 2)
    assert "Traceback" not in refused and ("in use" in refused or "already holds a run" in refused), refused


def test_overwrite_while_another_run_trains_is_refused_and_leaves_it_alone(tmp_path, capsys):
    out = tmp_path / "run"
    training = start(*COPY, "--steps", 100000, "--save-every", 5, "--out", out)
    try:
        wait_for(out / "checkpoint.npz", training)
        status, _, err = run(capsys, *COPY, "--steps", 2, "--out", out, "--overwrite")
        assert status == 2 and "in use" in one_line(err) and f"pid {training.pid}" in err, err
        assert (out / "checkpoint.npz").exists() and training.poll() is None
    finally:
        training.send_signal(signal.SIGTERM)
        training.communicate(timeout=120)


# --- a checkpoint carries what it belongs to -------------------------------------------------------------
def _lm_run(tmp_path, capsys, name="run", *extra):
    out = tmp_path / name
    status, _, err = run(capsys, *LM, "--steps", 2, "--out", out, *extra)
    assert status == 0, err
    return out


def refused_on_resume(capsys, out, *words):
    """Resuming ``out`` exits 2 with one line that names every one of ``words``."""
    status, _, err = run(capsys, *LM, "--steps", 3, "--out", out, "--resume")
    line = one_line(err)
    assert status == 2 and all(w in line for w in words), line


def test_checkpoint_from_another_run_is_refused_naming_both_sides(tmp_path, capsys):
    out = _lm_run(tmp_path, capsys)
    other = _lm_run(tmp_path, capsys, "other", "--lr", "0.002")
    (out / "checkpoint.npz").write_bytes((other / "checkpoint.npz").read_bytes())
    refused_on_resume(capsys, out, "lr", "0.002", "0.001")


def test_hand_edited_config_json_is_refused_on_resume(tmp_path, capsys):
    out = _lm_run(tmp_path, capsys)
    settings = json.loads((out / "config.json").read_text())
    settings["arguments"]["optimizer"] = "lamb"
    (out / "config.json").write_text(json.dumps(settings))
    refused_on_resume(capsys, out, "optimizer", "lamb", "adamw")


def test_tokenizer_with_two_ids_swapped_is_refused_on_resume(tmp_path, capsys):
    out = _lm_run(tmp_path, capsys)
    state = json.loads((out / "tokenizer.json").read_text())
    vocab = state["vocab"]
    vocab[5], vocab[6] = vocab[6], vocab[5]
    (out / "tokenizer.json").write_text(json.dumps(state))
    refused_on_resume(capsys, out, "tokenizer.json", "checkpoint.npz")


@pytest.mark.parametrize("edit, words", [
    (lambda s: s.update(step=-3), ["step", "-3"]),
    (lambda s: s.update(step=5, history=[]), ["step 5", "history"]),
])
def test_training_state_step_must_match_its_history(edit, words, tmp_path, capsys):
    out = tmp_path / "run"
    assert run(capsys, *COPY, "--steps", 2, "--out", out)[0] == 0
    path = str(out / "checkpoint.npz")
    model, state = checkpoint.load(path, with_training_state=True)
    edit(state)
    checkpoint.save(model, path, state)
    status, _, err = run(capsys, *COPY, "--steps", 3, "--out", out, "--resume")
    line = one_line(err)
    assert status == 2 and path in line, line
    for word in words:
        assert word in line, (word, line)


@pytest.mark.parametrize("edit, words", [
    (lambda a: a.pop("overrides"), ["overrides", "missing"]),
    (lambda a: a.update(overrides=[1]), ["overrides", "object"]),
    (lambda a: a.update(colour="red"), ["colour", "unknown"]),
    (lambda a: a.update(steps="many"), ["steps", "integer"]),
])
def test_edited_resume_arguments_are_one_line_naming_the_field(edit, words, tmp_path, capsys):
    out = tmp_path / "run"
    assert run(capsys, *COPY, "--steps", 2, "--out", out)[0] == 0
    settings = json.loads((out / "config.json").read_text())
    edit(settings["arguments"])
    (out / "config.json").write_text(json.dumps(settings))
    status, _, err = run(capsys, *COPY, "--steps", 3, "--out", out, "--resume")
    line = one_line(err)
    assert status == 2 and "config.json" in line, line
    for word in words:
        assert word in line, (word, line)


def test_deeply_nested_run_config_json_is_one_line(tmp_path, capsys):
    out = tmp_path / "run"
    assert run(capsys, *COPY, "--steps", 2, "--out", out)[0] == 0
    (out / "config.json").write_text('{"arguments": ' + "[" * 100_000 + "]" * 100_000 + "}")
    status, _, err = run(capsys, *COPY, "--steps", 3, "--out", out, "--resume")
    line = one_line(err)
    assert status == 2 and "config.json" in line and "nested deeper than" in line, line


# --- stale temporary files ----------------------------------------------------------------------------
def test_temporary_file_of_a_killed_save_is_cleared_by_the_next_save(tmp_path):
    target = tmp_path / "checkpoint.npz"
    code = (f"import os, signal\nfrom minishare.files import atomic_write\n"
            f"with atomic_write({str(target)!r}, 'wb') as f:\n"
            f"    f.write(b'half'); f.flush(); os.kill(os.getpid(), signal.SIGKILL)\n")
    subprocess.run([sys.executable, "-c", code], env=env())
    stale = [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]
    assert stale, "the killed save left no temporary file to clear"
    with atomic_write(target, "wb") as f:
        f.write(b"whole")
    assert sorted(os.listdir(tmp_path)) == ["checkpoint.npz"]
    assert target.read_bytes() == b"whole"


def test_temporary_file_of_a_live_save_is_kept(tmp_path, live_owner):
    target = tmp_path / "history.csv"
    live = tmp_path / f".history.csv.{live_owner}.abc.tmp"
    live.write_bytes(b"in progress")
    with atomic_write(target) as f:
        f.write("x")
    assert live.exists()


# --- interrupts ----------------------------------------------------------------------------------------
@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs Linux's /proc")
@pytest.mark.parametrize("delay", [0.0, 0.05, 0.1])
def test_ctrl_c_while_starting_is_one_line(delay, tmp_path):
    """SIGINT once the package's imports have begun (NumPy, imported first by minishare, is
    mapped into the process; Python's own start-up is over), plus ``delay`` seconds. The run is
    far too long to end on its own first (with 2 steps it did, on a fast start, and exited 0)."""
    process = start(*COPY, "--steps", 100_000, "--out", tmp_path / "run")
    deadline = time.monotonic() + 60
    while process.poll() is None and time.monotonic() < deadline:
        with open(f"/proc/{process.pid}/maps") as f:
            if "numpy" in f.read():
                break
        time.sleep(0.001)
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert "Traceback" not in err, err
    assert process.returncode in (130, -signal.SIGINT), (process.returncode, err)


def test_second_ctrl_c_still_says_how_to_resume(tmp_path, capsys, monkeypatch, terminal_sigint):
    """A second Ctrl-C during the save after the first interrupts at once: the one line still
    says where the last checkpoint is and how to resume. The two signals are real SIGINTs, sent
    by the process to itself while the fifth step's history is being written."""
    from minishare.run import training
    out = tmp_path / "run"
    real_save = training.save_history

    def save_history(history, path):
        real_save(history, path)
        if len(history) == 5:
            # raise_signal, not os.kill: it runs the handler before it returns, so the two are
            # never merged into one (os.kill may land in another thread and leave both pending)
            signal.raise_signal(signal.SIGINT)       # the first: a stop request, recorded
            signal.raise_signal(signal.SIGINT)       # the second: interrupts at once
    monkeypatch.setattr(training, "save_history", save_history)
    status, _, err = run(capsys, *COPY, "--steps", 100, "--save-every", 5, "--out", out)
    line = one_line(err)
    assert status == 130 and "--resume" in line and str(out) in line and "step 5" in line, line


# --- messages that name the problem ----------------------------------------------------------------------
def test_sop_on_a_two_document_corpus_does_not_talk_about_nsp(tmp_path, capsys):
    corpus = tmp_path / "two.txt"
    corpus.write_text("The cat sat. The dog ran. A bird sang.\n\nThe sun rose. The day began. It was warm.\n")
    status, _, err = run(capsys, "train", "--corpus", corpus, "--vocab-size", 60, "--steps", 1,
                         "--batch-size", 2, "--seq-len", 16, "--no-progress", "--out", tmp_path / "run")
    line = one_line(err)
    assert status == 2 and "NSP takes negatives" not in line and "held-out" in line \
        and "at least 20 documents" in line, line


@pytest.mark.parametrize("argv", [["plan", "cycle", "-N", "1000000000", "-M", "2"],
                                  ["count", "--preset", "albert-tiny", "-N", "1000000000"],
                                  [*COPY, "--steps", "1", "-N", "10000000"]])
def test_layer_counts_beyond_the_ceiling_are_one_line(argv, tmp_path):
    code = ("import resource, sys\nresource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
            "from minishare import cli\n"
            f"sys.exit(cli.main({argv + (['--out', str(tmp_path / 'run')] if argv[0] == 'train' else [])!r}))")
    done = subprocess.run([sys.executable, "-c", code], env=env(), capture_output=True, text=True, timeout=120)
    line = one_line(done.stderr)
    assert done.returncode == 2 and "at most" in line and "out of memory" not in line, line
