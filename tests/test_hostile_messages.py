"""Messages that help (issue 34): a lock left empty by a failed start is recognised, "continue with
--resume" is said only where a checkpoint exists, a text file of ids that is not UTF-8 is one
line, and a checkpoint entry's name is cut in the message however long it is."""
import os
import zipfile

import numpy as np
import pytest

from minishare import checkpoint
from minishare.analysis import layerwise
from minishare.errors import InvalidValue
from test_hostile_runs import COPY
from test_run_workflow import one_line, run


def test_an_old_empty_lock_from_a_failed_start_is_taken_over(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / ".lock").write_text("")
    os.utime(out / ".lock", (1, 1))                  # left long ago (1970)
    status, _, err = run(capsys, *COPY, "--steps", 1, "--out", out)
    assert status == 0, err
    assert not (out / ".lock").exists()


def test_a_fresh_empty_lock_is_still_respected(tmp_path, capsys):
    """A lock being written this instant is empty too: only an old one is abandoned."""
    out = tmp_path / "run"
    out.mkdir()
    (out / ".lock").write_text("")
    status, _, err = run(capsys, *COPY, "--steps", 1, "--out", out)
    assert status == 2 and "in use" in one_line(err)


def test_a_lock_whose_writing_fails_is_removed(tmp_path, capsys, monkeypatch):
    """A full disk when the lock's pid is written: the lock goes, so the folder is not refused later."""
    from minishare.run import folder

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(folder.json, "dump", full)
    out = tmp_path / "run"
    status, _, err = run(capsys, *COPY, "--steps", 1, "--out", out)
    assert status == 2 and "No space left" in one_line(err)
    assert not (out / ".lock").exists()


def test_a_run_without_a_checkpoint_is_not_told_to_resume(tmp_path, capsys):
    out = tmp_path / "run"
    assert run(capsys, *COPY, "--steps", 1, "--out", out)[0] == 0
    os.remove(out / "checkpoint.npz")                # as a kill -9 before the first save leaves it
    status, _, err = run(capsys, *COPY, "--steps", 1, "--out", out)
    line = one_line(err)
    assert status == 2 and "--resume" not in line and "--overwrite" in line and "first checkpoint" in line, line


def test_a_run_with_a_checkpoint_is_told_both_ways(tmp_path, capsys):
    out = tmp_path / "run"
    assert run(capsys, *COPY, "--steps", 1, "--out", out)[0] == 0
    status, _, err = run(capsys, *COPY, "--steps", 1, "--out", out)
    line = one_line(err)
    assert status == 2 and "--resume" in line and "--overwrite" in line, line


def test_input_ids_that_are_not_utf8_are_one_error(tmp_path):
    path = tmp_path / "ids.txt"
    path.write_bytes(b"1 2 3\n4 5 \xff\xfe 6\n")
    with pytest.raises(InvalidValue, match="not UTF-8 text"):
        layerwise.load_input_ids(str(path), vocab_size=10, max_positions=8)


def test_a_long_entry_name_is_cut_in_the_message(tmp_path):
    path = tmp_path / "ckpt.npz"
    with open(path, "wb") as f:
        np.savez(f, __meta__=np.zeros(3, dtype=np.uint8))
    with zipfile.ZipFile(path, "a") as z:
        z.writestr("x" * 60_000 + ".npy", b"")
    with pytest.raises(checkpoint.CheckpointError) as info:
        checkpoint.load(str(path))
    assert len(str(info.value)) < 400
