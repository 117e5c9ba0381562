"""Thread control: ``minishare.set_num_threads`` and the ``--threads`` flag. What the BLAS library
reports is read through threadpoolctl itself (skipped where it is not installed)."""
import sys

import pytest

import minishare
from minishare import cli, threads


@pytest.fixture
def threadpoolctl():
    module = pytest.importorskip("threadpoolctl")
    before = module.threadpool_info()
    if not [pool for pool in before if pool["user_api"] == "blas"]:
        pytest.skip("threadpoolctl finds no BLAS library under NumPy")
    yield module
    module.threadpool_limits({pool["prefix"]: pool["num_threads"] for pool in before})


def blas_threads(module):
    return {pool["num_threads"] for pool in module.threadpool_info() if pool["user_api"] == "blas"}


@pytest.mark.parametrize("n", [2, 1])
def test_set_num_threads_changes_what_blas_reports(n, threadpoolctl):
    minishare.set_num_threads(n)
    assert blas_threads(threadpoolctl) == {n}
    assert minishare.get_num_threads() == n


@pytest.mark.parametrize("n", [0, -1, 1.5, True])
def test_set_num_threads_refuses_non_positive_counts(n):
    with pytest.raises(ValueError, match="positive int"):
        minishare.set_num_threads(n)


def test_train_threads_flag_sets_them_before_training(tmp_path, capsys, threadpoolctl):
    minishare.set_num_threads(2)
    status = cli.main(["train", "--threads", "1", "--corpus", str(tmp_path / "missing.txt"),
                       "--out", str(tmp_path / "run"), "--no-progress"])
    assert status == 2 and "missing.txt" in capsys.readouterr().err       # failed after setting
    assert blas_threads(threadpoolctl) == {1}


@pytest.mark.parametrize("command", [["reproduce"], ["train"], ["layerwise", "--pretrained", "x"]])
@pytest.mark.parametrize("value", ["0", "two", "-3"])
def test_bad_threads_flag_is_one_line(command, value, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(command + ["--threads", value])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--threads" in err and "positive integer" in err and "Traceback" not in err


def test_without_threadpoolctl_one_line_says_what_to_install(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)     # import threadpoolctl now fails
    monkeypatch.setattr(threads, "_controller", None)
    status = cli.main(["train", "--threads", "1", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "pip install threadpoolctl" in err, err
