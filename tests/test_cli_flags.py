"""Every flag of ``train`` is either read or refused (issue 34): a flag the chosen task has no use
for, or one that contradicts another, is refused in one line naming both, before anything runs."""
import os

import pytest

from test_hostile_runs import COPY
from test_run_workflow import one_line, run


@pytest.mark.parametrize("argv, words", [
    (["--task", "copy", "--corpus", "grammar"], ["--corpus", "--task copy"]),
    (["--task", "reverse", "--vocab-size", "500"], ["--vocab-size", "--task reverse"]),
    (["--task", "lm", "--objective", "nsp"], ["--objective", "--task lm"]),
    (["--task", "sort", "--objective", "sop"], ["--objective", "--task sort"]),
    (["--task", "lm", "--preset", "albert-base"], ["--preset", "--task lm"]),
])
def test_a_flag_the_task_does_not_read_is_refused_naming_both(argv, words, tmp_path, capsys):
    out = tmp_path / "run"
    status, _, err = run(capsys, "train", *argv, "--steps", 1, "--no-progress", "--out", out)
    line = one_line(err)
    assert status == 2 and all(word in line for word in words), line
    assert not os.path.exists(out)


def test_a_flag_the_resumed_runs_task_does_not_read_is_refused(tmp_path, capsys):
    out = tmp_path / "run"
    assert run(capsys, *COPY, "--steps", 1, "--out", out)[0] == 0
    status, _, err = run(capsys, "train", "--resume", "--corpus", "grammar", "--out", out, "--no-progress")
    line = one_line(err)
    assert status == 2 and "--corpus" in line and "--task copy" in line, line


def test_resume_with_overwrite_is_refused_naming_both(tmp_path, capsys):
    out = tmp_path / "run"
    assert run(capsys, *COPY, "--steps", 1, "--out", out)[0] == 0
    before = (out / "checkpoint.npz").read_bytes()
    status, _, err = run(capsys, *COPY, "--steps", 2, "--out", out, "--resume", "--overwrite")
    line = one_line(err)
    assert status == 2 and "--resume" in line and "--overwrite" in line, line
    assert (out / "checkpoint.npz").read_bytes() == before
