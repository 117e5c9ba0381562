"""Malformed and hostile checkpoint files (issue 13): each one raises CheckpointError naming the
file, does bounded work (no allocation from an edited size, no decompression of entries the format
does not have), never suggests loading with pickle, and never runs code from the file.

Files are built here with NumPy and zipfile directly, never through ``checkpoint.save``'s internals.
"""
import json
import os
import pickle
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from minishare import checkpoint
from minishare.checkpoint import CheckpointError
from minishare.models import AlbertConfig, AlbertForPreTraining

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def saved(tmp_path):
    path = str(tmp_path / "ckpt.npz")
    model = AlbertForPreTraining(AlbertConfig(
        vocab_size=23, embedding_size=8, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=16))
    checkpoint.save(model, path, {"step": 3, "optimizer": {"m": np.ones(4)}})
    return path


def read_npz(path):
    with np.load(path, allow_pickle=False) as npz:
        return {key: npz[key] for key in npz.files}


def write_npz(path, files):
    with open(path, "wb") as f:
        np.savez(f, **files)


def meta_of(files):
    return json.loads(files["__meta__"].tobytes().decode())


def set_meta(files, meta):
    files["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)


def refused(path, *words, with_training_state=False):
    with pytest.raises(CheckpointError) as info:
        checkpoint.load(path, with_training_state=with_training_state)
    message = str(info.value)
    assert str(path) in message, "the message must name the file"
    assert "allow_pickle" not in message
    for word in words:
        assert word in message, (word, message)
    return message


# --- not the expected container or entries -------------------------------------------------------
def test_npy_file_renamed_to_npz(tmp_path):
    path = str(tmp_path / "weights.npz")
    with open(path, "wb") as f:
        np.save(f, np.zeros((3, 3)))
    refused(path)


@pytest.mark.parametrize("meta", [np.zeros(5, dtype=np.float32), np.zeros((2, 3), dtype=np.uint8),
                                  np.frombuffer(b"[1, 2, 3]", dtype=np.uint8),
                                  np.frombuffer(b'"a string"', dtype=np.uint8)])
def test_meta_entry_that_is_not_a_json_object_in_bytes(meta, saved):
    files = read_npz(saved)
    files["__meta__"] = meta
    write_npz(saved, files)
    refused(saved, "__meta__")


def test_string_typed_parameter(saved):
    files = read_npz(saved)
    key = "param/albert.pooler.bias"
    files[key] = np.array(["x"] * files[key].size)
    write_npz(saved, files)
    refused(saved, "albert.pooler.bias")


def test_object_array_is_refused_with_our_message_and_never_unpickled(tmp_path):
    """A pickled object whose unpickling would create a file: load refuses, the file never appears."""
    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))
    path = str(tmp_path / "evil.npz")
    with zipfile.ZipFile(path, "w") as z:
        with z.open("__meta__.npy", "w") as f:
            np.lib.format.write_array(f, np.array([Payload()], dtype=object), allow_pickle=True)
    message = refused(path)
    assert "pickle" not in message.lower() or "never" in message.lower()
    assert not marker.exists()
    assert pickle   # (pickle is what np.save used to store the payload)


# --- training state -------------------------------------------------------------------------------
@pytest.mark.parametrize("edit", ["not a tree", "unknown kind", "missing array", "array key junk"])
def test_malformed_training_state(edit, saved):
    files = read_npz(saved)
    meta = meta_of(files)
    if edit == "not a tree":
        meta["train"] = {"dict": 5}
    elif edit == "unknown kind":
        meta["train"] = {"frozenset": [1, 2]}
    elif edit == "missing array":
        meta["train"] = {"dict": [["m", {"array": "train/nowhere"}]]}
    else:
        meta["train"] = {"dict": [["m", {"array": "__meta__"}]]}
    set_meta(files, meta)
    write_npz(saved, files)
    refused(saved, "training state", with_training_state=True)


def test_training_state_without_what_the_trainer_needs_is_refused_on_resume(tmp_path, capsys):
    """A run whose checkpoint holds a training state lacking the optimizer: --resume says so."""
    from minishare import cli
    out = tmp_path / "run"
    common = ["train", "--task", "copy", "-H", 16, "-N", 1, "--batch-size", 4, "--no-progress", "--out", out]
    assert cli.main([str(a) for a in [*common, "--steps", 2]]) == 0
    path = str(out / "checkpoint.npz")
    model, state = checkpoint.load(path, with_training_state=True)
    del state["optimizer"]
    checkpoint.save(model, path, state)
    capsys.readouterr()
    assert cli.main([str(a) for a in [*common, "--steps", 3, "--resume"]]) == 2
    err = capsys.readouterr().err
    assert path in err and "training state" in err and len(err.strip().splitlines()) == 1


# --- bounded work ---------------------------------------------------------------------------------
def test_size_edited_in_the_config_is_refused_before_allocating(saved):
    """V = 10^10 would mean 1.3 TB of embeddings: refused from the numbers, in a process whose
    address space is capped at 2 GiB so that the old behaviour cannot harm the machine."""
    files = read_npz(saved)
    meta = meta_of(files)
    meta["config"]["vocab_size"] = 10 ** 10
    set_meta(files, meta)
    write_npz(saved, files)
    script = f"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from minishare import checkpoint
try:
    checkpoint.load({saved!r})
except checkpoint.CheckpointError as err:
    print("CheckpointError:", err)
except MemoryError:
    print("MemoryError")
"""
    env = {**os.environ, "PYTHONPATH": ROOT, "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout.startswith("CheckpointError:"), done.stdout + done.stderr
    assert saved in done.stdout and "vocab_size" in done.stdout


def deflated_zeros(path, name, n_bytes, keep):
    """Write the arrays ``keep`` plus an entry ``name`` holding ``n_bytes`` zero bytes as an
    .npy, deflated: a few KB on disk."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for key, array in keep.items():
            with z.open(f"{key}.npy", "w") as f:
                np.lib.format.write_array(f, array, allow_pickle=False)
        with z.open(f"{name}.npy", "w", force_zip64=True) as f:
            np.lib.format.write_array_header_1_0(f, {"descr": "|u1", "fortran_order": False,
                                                     "shape": (n_bytes,)})
            chunk = bytes(1 << 20)
            for _ in range(n_bytes >> 20):
                f.write(chunk)


@pytest.mark.parametrize("name", ["junk", "param/albert.pooler.bias"])
def test_entry_that_would_inflate_is_refused_before_decompressing(name, saved, tmp_path, monkeypatch):
    """64 MiB of zeros deflate to about 64 KB; the entry is refused from the zip directory, and no
    entry of the file is decompressed to find that out."""
    keep = read_npz(saved)
    keep.pop(name, None)
    path = str(tmp_path / "bomb.npz")
    deflated_zeros(path, name, 64 << 20, keep)
    assert os.path.getsize(path) < (1 << 20)
    opened = []
    real_open = zipfile.ZipFile.open

    def spy(self, entry, *args, **kwargs):
        opened.append(entry if isinstance(entry, str) else entry.filename)
        return real_open(self, entry, *args, **kwargs)
    monkeypatch.setattr(zipfile.ZipFile, "open", spy)
    refused(path, name)
    assert f"{name}.npy" not in opened
