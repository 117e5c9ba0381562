"""``python -m minishare train`` never loses a run (issue 13).

Interruptions are real: the CLI runs in a subprocess and receives SIGINT, SIGTERM or SIGKILL once
its first periodic checkpoint is on disk; nothing in the trainer is patched to stop it. Runs are
tiny (the copy task, H = 16, one layer) so each test takes a few seconds.
"""
import csv
import hashlib
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from minishare import checkpoint, cli
from conftest import default_signals

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = ["train", "--task", "copy", "-H", "16", "-N", "1", "--batch-size", "8", "--eval-every", "50",
        "--no-progress"]
COMPARED = ("step", "loss", "lr", "grad_norm", "eval_loss", "eval_exact_match")


def run(capsys, *argv):
    try:
        status = cli.main([str(a) for a in argv])
    except SystemExit as exit:
        status = exit.code
    out, err = capsys.readouterr()
    return status, out, err


def one_line(err):
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def checksums(folder):
    """{file name: sha256} of every file in ``folder`` (hidden ones included)."""
    result = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            result[name] = hashlib.sha256(f.read()).hexdigest()
    return result


def start(out, *extra):
    env = {**os.environ, "PYTHONPATH": ROOT, "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-m", "minishare", *TINY, "--out", str(out), *extra],
                            env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_signals)


def interrupt_after_first_checkpoint(process, out, signum):
    """Send ``signum`` once OUT/checkpoint.npz exists; -> (exit status, stdout, stderr)."""
    deadline = time.monotonic() + 120
    while not os.path.exists(out / "checkpoint.npz"):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no checkpoint appeared"
        time.sleep(0.01)
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=120)
    return process.returncode, stdout, stderr


# --- interruption and resumption ------------------------------------------------------------------
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_saves_checkpoint_and_history_and_says_how_to_resume(signum, tmp_path):
    out = tmp_path / "run"
    status, stdout, stderr = interrupt_after_first_checkpoint(
        start(out, "--steps", "2000", "--save-every", "2"), out, signum)
    assert status != 0
    line = one_line(stderr)
    assert "--resume" in line and str(out) in line
    _, state = checkpoint.load(str(out / "checkpoint.npz"), with_training_state=True)
    rows = read_csv(out / "history.csv")
    assert 2 <= state["step"] < 2000
    assert [int(r["step"]) for r in rows] == list(range(1, state["step"] + 1))
    assert not [name for name in os.listdir(out) if name.endswith(".tmp")]


def test_interrupted_and_resumed_run_equals_the_uninterrupted_one(tmp_path, capsys):
    steps = "80"
    parts = tmp_path / "parts"
    status, _, stderr = interrupt_after_first_checkpoint(
        start(parts, "--steps", steps, "--save-every", "2"), parts, signal.SIGINT)
    assert status != 0, stderr
    stopped = len(read_csv(parts / "history.csv"))
    assert stopped < int(steps)
    # the run's flags are reused; --save-every may change (fewer saves: each one syncs the disk)
    status, _, err = run(capsys, "train", "--out", parts, "--resume", "--save-every", 100)
    assert status == 0, err

    whole = tmp_path / "whole"
    status, _, err = run(capsys, *TINY, "--steps", steps, "--out", whole)
    assert status == 0, err
    whole_rows, part_rows = read_csv(whole / "history.csv"), read_csv(parts / "history.csv")
    assert len(part_rows) == len(whole_rows) == int(steps)
    for column in COMPARED:
        assert [r[column] for r in part_rows] == [r[column] for r in whole_rows], column
    with np.load(whole / "checkpoint.npz", allow_pickle=False) as a, \
            np.load(parts / "checkpoint.npz", allow_pickle=False) as b:
        params = [key for key in a.files if key.startswith("param/")]
        assert params and sorted(params) == sorted(k for k in b.files if k.startswith("param/"))
        for key in params:
            assert np.array_equal(a[key], b[key]), key


def test_killed_run_loses_at_most_save_every_steps_and_resumes(tmp_path, capsys):
    out = tmp_path / "run"
    process = start(out, "--steps", "2000", "--save-every", "3")
    status, _, _ = interrupt_after_first_checkpoint(process, out, signal.SIGKILL)
    assert status == -signal.SIGKILL
    _, state = checkpoint.load(str(out / "checkpoint.npz"), with_training_state=True)
    assert state["step"] % 3 == 0 and state["step"] >= 3
    status, _, err = run(capsys, "train", "--out", out, "--resume", "--steps", state["step"] + 2)
    assert status == 0, err
    assert [int(r["step"]) for r in read_csv(out / "history.csv")][-1] == state["step"] + 2
    assert not [name for name in os.listdir(out) if name.endswith(".tmp")]


# --- divergence -----------------------------------------------------------------------------------
def test_diverging_run_stops_with_one_line_and_keeps_its_last_good_checkpoint(tmp_path, capsys):
    """lr = 10^6 makes the loss NaN within a few steps."""
    out = tmp_path / "run"
    status, _, err = run(capsys, *TINY, "--steps", 60, "--save-every", 2, "--lr", "1e6", "--out", out)
    assert status != 0
    line = one_line(err)
    assert "step" in line and "last finite loss" in line
    rows = read_csv(out / "history.csv")
    assert rows and all(np.isfinite(float(r["loss"])) for r in rows)
    model, state = checkpoint.load(str(out / "checkpoint.npz"), with_training_state=True)
    assert state["step"] <= len(rows) and state["step"] % 2 == 0
    assert all(np.isfinite(p.numpy()).all() for p in model.parameters())
    diverged_at = len(rows) + 1
    assert f"step {diverged_at}" in line


# --- an existing --out ----------------------------------------------------------------------------
def test_second_train_into_an_existing_run_is_refused_and_changes_nothing(tmp_path, capsys):
    out = tmp_path / "run"
    assert run(capsys, *TINY, "--steps", 3, "--out", out)[0] == 0
    before = checksums(out)
    status, _, err = run(capsys, *TINY, "--steps", 3, "--out", out)
    line = one_line(err)
    assert status == 2 and "--resume" in line and "--overwrite" in line and str(out) in line
    assert checksums(out) == before


def test_overwrite_replaces_the_run(tmp_path, capsys):
    out = tmp_path / "run"
    assert run(capsys, *TINY, "--steps", 3, "--out", out)[0] == 0
    assert run(capsys, *TINY, "--steps", 2, "--out", out, "--overwrite")[0] == 0
    assert len(read_csv(out / "history.csv")) == 2


def test_refused_command_on_an_existing_run_writes_nothing(tmp_path, capsys, text_corpus):
    """A pre-training run; then commands that are refused for a bad argument: the tokenizer and
    every other file stay byte for byte as they were."""
    out = tmp_path / "run"
    common = ["train", "--corpus", text_corpus, "--vocab-size", 80, "--seq-len", 16, "--batch-size", 4,
              "-H", 16, "-N", 1, "--eval-every", 2, "--no-progress", "--out", out]
    assert run(capsys, *common, "--steps", 2)[0] == 0
    before = checksums(out)
    for extra in (["--preset", "albert-gigantic", "--overwrite"], ["--resume", "--vocab-size", 60],
                  ["--overwrite", "--batch-size", 0]):
        status, _, err = run(capsys, *common, "--steps", 3, *extra)
        assert status == 2, extra
        one_line(err)
        assert checksums(out) == before, extra


def test_resume_with_contradicting_flags_names_each_with_both_values(tmp_path, capsys):
    out = tmp_path / "run"
    assert run(capsys, *TINY, "--steps", 2, "--out", out)[0] == 0
    before = checksums(out)
    status, _, err = run(capsys, "train", "--out", out, "--resume", "--steps", 4, "-H", 32,
                         "--sharing", "all-shared", "--task", "reverse", "--seed", 3)
    line = one_line(err)
    assert status == 2
    for flag, asked, saved in [("--hidden-size", "32", "16"), ("--sharing", "all-shared", "not-shared"),
                               ("--task", "reverse", "copy"), ("--seed", "3", "0")]:
        assert flag in line and asked in line and saved in line, (flag, line)
    assert "--steps" not in line                     # steps may change on resume
    assert checksums(out) == before


def test_help_lists_the_flags_that_may_change_on_resume(capsys):
    status, out, _ = run(capsys, "train", "--help")
    assert status == 0
    text = " ".join(out.split())
    assert "may change on resume" in text
    for flag in ("--steps", "--eval-every", "--save-every"):
        assert flag in text[text.index("may change on resume") - 200:]


@pytest.mark.parametrize("flag, value", [("--batch-size", "0"), ("--seed", "-1"), ("--steps", "0"),
                                         ("--save-every", "0"), ("--lr", "-1"), ("--lr", "nan"),
                                         ("--seq-len", "0"), ("--vocab-size", "0"), ("--eval-every", "-5")])
def test_bad_numbers_name_their_flag_and_write_nothing(flag, value, tmp_path, capsys):
    out = tmp_path / "run"
    status, _, err = run(capsys, *TINY, "--steps", 2, "--out", out, flag, value)
    line = one_line(err)
    assert status == 2 and flag in line and value in line
    assert not out.exists()


def test_unwritable_out_is_found_before_training(tmp_path, capsys, monkeypatch):
    """/proc exists and takes no new files, even for root."""
    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc here")
    from minishare.train import Trainer

    def refuse(*args, **kwargs):
        raise AssertionError("training started before --out was found unwritable")
    monkeypatch.setattr(Trainer, "train", refuse)
    status, _, err = run(capsys, *TINY, "--steps", 2, "--out", "/proc")
    line = one_line(err)
    assert status == 2 and "/proc" in line


# --- errors that used to escape as tracebacks -----------------------------------------------------
@pytest.mark.parametrize("error, words", [(MemoryError(), ["memory"]),
                                          (KeyboardInterrupt(), ["interrupted"]),
                                          (FloatingPointError("overflow in exp"), ["overflow"])])
def test_errors_from_deep_inside_are_one_line(error, words, tmp_path, capsys, monkeypatch):
    from minishare.run import training

    def fail(*args, **kwargs):
        raise error
    monkeypatch.setattr(training, "make_task", fail)
    status, _, err = run(capsys, *TINY, "--steps", 2, "--out", tmp_path / "run")
    line = one_line(err)
    assert status != 0
    for word in words:
        assert word in line


# --- the one atomic writer ------------------------------------------------------------------------
def test_config_json_is_written_atomically(tmp_path, capsys, monkeypatch):
    """With the final rename failing, no file of the run is half-written or left as *.tmp."""
    out = tmp_path / "run"
    assert run(capsys, *TINY, "--steps", 2, "--out", out)[0] == 0
    before = checksums(out)

    def no_rename(src, dst):
        raise OSError(28, "No space left on device", dst)
    monkeypatch.setattr(os, "replace", no_rename)
    status, _, err = run(capsys, *TINY, "--steps", 3, "--seed", 1, "--out", out, "--overwrite")
    assert status == 2
    one_line(err)
    monkeypatch.undo()
    after = checksums(out)
    assert not [name for name in after if name.endswith(".tmp")]
    assert {name: after[name] for name in after if name in before} == \
        {name: before[name] for name in before if name in after}


def test_drawn_plan_is_written_atomically(tmp_path, capsys, monkeypatch):
    pytest.importorskip("matplotlib")
    target = tmp_path / "plan.png"

    def no_rename(src, dst):
        raise OSError(28, "No space left on device", dst)
    monkeypatch.setattr(os, "replace", no_rename)
    status, _, err = run(capsys, "plan", "cycle", "-N", 4, "-M", 2, "--draw", target)
    monkeypatch.undo()
    assert status == 2
    one_line(err)
    assert os.listdir(tmp_path) == []


def test_config_json_records_the_arguments(tmp_path, capsys):
    out = tmp_path / "run"
    assert run(capsys, *TINY, "--steps", 2, "--save-every", 1, "--out", out)[0] == 0
    with open(out / "config.json") as f:
        settings = json.load(f)
    assert settings["arguments"]["save_every"] == 1 and settings["arguments"]["seed"] == 0
