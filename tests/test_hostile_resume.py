"""A resumed run is the run it continues (issue 34): its data, dtype, optimizer and schedule are
checked against the run's own arguments, and a checkpoint that differs is refused in one line
naming both sides, never trained on. Checkpoints are edited here with NumPy directly."""
import json

import numpy as np
import pytest

from minishare import data
from test_checkpoint_files import read_npz, write_npz
from test_hostile_runs import COPY, LM
from test_run_workflow import one_line, run


def tree_get(tree, *keys):
    """The value at ``keys`` of a training-state tree as checkpoint metadata stores it."""
    for key in keys:
        (kind, value), = tree.items()
        tree = dict(value)[key] if kind == "dict" else value[key]
    return tree


def edit_meta(files, change):
    meta = json.loads(files["__meta__"].tobytes().decode())
    change(meta["train"])
    files["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)


@pytest.fixture
def trained(tmp_path, capsys):
    out = tmp_path / "run"
    assert run(capsys, *COPY, "--steps", 2, "--out", out)[0] == 0
    return out


def refused_on_resume(capsys, out, *words):
    status, _, err = run(capsys, *COPY, "--steps", 4, "--out", out, "--resume")
    line = one_line(err)
    assert status == 2 and str(out / "checkpoint.npz") in line and "diverged" not in line, line
    for word in words:
        assert word in line, (word, line)
    return line


def state_key(files, name="exp_avg"):
    return next(key for key in files if key.startswith("train/optimizer/state/") and key.endswith(name))


def test_float64_parameters_are_refused_naming_the_runs_dtype(trained, capsys):
    path = trained / "checkpoint.npz"
    files = read_npz(path)
    files.update({key: value.astype(np.float64) for key, value in files.items()
                  if key.startswith(("param/", "train/optimizer/state/"))})
    write_npz(path, files)
    refused_on_resume(capsys, trained, "float64", "float32")


@pytest.mark.parametrize("dtype, words", [(bool, ["dtype bool", "float32"]), (np.float16, ["dtype float16"]),
                                          (np.int64, ["dtype int64"])])
def test_optimizer_state_of_another_dtype_is_refused(dtype, words, trained, capsys):
    path = trained / "checkpoint.npz"
    files = read_npz(path)
    key = state_key(files)
    files[key] = files[key].astype(dtype)
    write_npz(path, files)
    refused_on_resume(capsys, trained, "optimizer state exp_avg", *words)


def test_nan_optimizer_state_is_named_not_reported_as_divergence(trained, capsys):
    path = trained / "checkpoint.npz"
    files = read_npz(path)
    key = state_key(files, "exp_avg_sq")
    files[key] = np.full_like(files[key], np.nan)
    write_npz(path, files)
    refused_on_resume(capsys, trained, "exp_avg_sq", "NaN")


@pytest.mark.parametrize("step", [0, -1, 99])
def test_adam_step_count_outside_the_run_is_refused(step, trained, capsys):
    path = trained / "checkpoint.npz"
    files = read_npz(path)

    def change(train):
        states = tree_get(train, "optimizer", "state")["dict"]
        states[0][1]["dict"] = [[k, step if k == "step" else v] for k, v in states[0][1]["dict"]]
    edit_meta(files, change)
    write_npz(path, files)
    refused_on_resume(capsys, trained, f"Adam step count {step}")


@pytest.mark.parametrize("base", [[-0.001], [0.5]])
def test_schedule_with_another_base_learning_rate_is_refused(base, trained, capsys):
    path = trained / "checkpoint.npz"
    files = read_npz(path)

    def change(train):
        tree_get(train, "scheduler", "base_lrs")["list"] = base
    edit_meta(files, change)
    write_npz(path, files)
    refused_on_resume(capsys, trained, f"scheduler base learning rates {base}")


def test_schedule_at_another_step_is_refused(trained, capsys):
    path = trained / "checkpoint.npz"
    files = read_npz(path)

    def change(train):
        for key, value in train["dict"]:
            if key == "scheduler":
                value["dict"] = [[k, 0 if k == "last_epoch" else v] for k, v in value["dict"]]
    edit_meta(files, change)
    write_npz(path, files)
    refused_on_resume(capsys, trained, "scheduler at step 0", "run is at step 2")


def test_a_changed_optimizer_hyperparameter_is_refused(trained, capsys):
    path = trained / "checkpoint.npz"
    files = read_npz(path)

    def change(train):
        group = tree_get(train, "optimizer", "param_groups")["list"][0]
        group["dict"] = [[k, 0.5 if k == "eps" else v] for k, v in group["dict"]]
    edit_meta(files, change)
    write_npz(path, files)
    refused_on_resume(capsys, trained, "eps=0.5")


def test_a_duplicated_zip_entry_is_refused(trained, capsys):
    import zipfile
    path = trained / "checkpoint.npz"
    with zipfile.ZipFile(path) as z:
        name = next(n for n in z.namelist() if n.startswith("param/"))
        content = z.read(name)
    with pytest.warns(UserWarning, match="Duplicate name"), zipfile.ZipFile(path, "a") as z:
        z.writestr(name, content)
    refused_on_resume(capsys, trained, "twice", name)


def test_a_corpus_changed_since_is_refused_naming_the_data(tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    documents = data.grammar_corpus(60, seed=0)
    corpus.write_text("\n\n".join(" ".join(d) for d in documents))
    out = tmp_path / "run"
    argv = [a if a != "grammar" else corpus for a in LM]
    assert run(capsys, *argv, "--steps", 2, "--out", out)[0] == 0
    corpus.write_text("\n\n".join(" ".join(d) for d in documents[::-1]))     # the same words, other documents
    status, _, err = run(capsys, *argv, "--steps", 4, "--out", out, "--resume")
    line = one_line(err)
    assert status == 2 and "data digest" in line and "the data now" in line and "corpus" in line, line


def test_an_unchanged_run_still_resumes(trained, capsys):
    status, _, err = run(capsys, *COPY, "--steps", 4, "--out", trained, "--resume")
    assert status == 0, err
