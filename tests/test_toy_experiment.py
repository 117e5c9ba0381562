"""The experiment interface, proved by an experiment that lives in one file outside the package
(``toy_experiment.py``): registered, it runs through ``reproduce --quick`` with its runs, its
cache, its claim, its baseline and its figure, and no file of the framework names it."""
import json
import os
import subprocess

import pytest

pytest.importorskip("matplotlib")

from minishare.experiments import registry, reproduce  # noqa: E402

import toy_experiment  # noqa: E402  (tests/ is on the path: pytest's rootdir conftest)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def toy():
    registry.register(toy_experiment)
    yield registry.get("toy")
    registry.unregister("toy")


def test_a_registered_experiment_runs_through_reproduce(toy, tmp_path, monkeypatch):
    text = open(reproduce.run(str(tmp_path), quick=True, only=["toy"], progress=False)).read()
    assert f"## {toy_experiment.TITLE}" in text and "| two layers |" in text
    assert os.path.exists(tmp_path / "toy" / "toy_losses.png") and "toy/toy_losses.png" in text
    ledger = json.loads((tmp_path / "claims.json").read_text())
    (claim,) = [c for c in ledger["claims"] if c["experiment"] == "toy"]
    assert claim["id"] == "toy.two_vs_one" and claim["seeds"] == [0, 1] and claim["primary"]
    assert [b["name"] for b in ledger["baselines"] if b["experiment"] == "toy"] == ["uniform over the vocabulary"]
    trained = sorted(os.listdir(tmp_path / "runs"))
    assert trained == ["toy-1-s0", "toy-1-s1", "toy-2-s0", "toy-2-s1"]
    saved = json.loads((tmp_path / "toy" / "result.json").read_text())
    assert saved["settings"]["toy_steps"] == 3 and "pretrain_steps" not in saved["settings"]

    said = {c["id"]: c["statement"] for c in ledger["claims"]}.__getitem__
    (table,) = toy.book_tables(saved["result"], saved["settings"], said).values()
    assert said("toy.two_vs_one") in table and "over seeds 0, 1" in table and "| the one-layer arm's loss | – |" in table

    def must_not_run(*args, **kwargs):
        raise AssertionError("a cached experiment ran again")
    monkeypatch.setattr(toy_experiment, "run", must_not_run)
    assert f"## {toy_experiment.TITLE}" in open(reproduce.run(str(tmp_path), quick=True, only=["toy"],
                                                                 progress=False)).read()


def test_no_file_of_the_framework_names_the_toy():
    """Adding the experiment touched its own file and its test, nothing else: no code of the package,
    the book's build or the notebooks imports it or names it (the docs may point to it as a template)."""
    found = subprocess.run(["git", "grep", "-n", "-e", "import toy_experiment", "-e", '"toy"', "--",
                            "minishare", "book/_ext", "book/conf.py", "notebooks"],
                           cwd=ROOT, capture_output=True, text=True).stdout.splitlines()
    assert found == []


def test_a_module_that_lacks_part_of_the_interface_is_named():
    import types
    module = types.ModuleType("half")
    module.NAME, module.TITLE = "half", "Half an experiment"
    with pytest.raises(ValueError, match="half lacks ORDER, READS, run, figures, report"):
        registry.register(module)


def test_an_experiment_that_reads_an_undeclared_field_is_stopped(toy, tmp_path, monkeypatch):
    monkeypatch.setattr(toy_experiment, "_request", lambda settings, layers, seed: settings.pretrain_steps)
    with pytest.raises(ValueError, match="'toy' reads settings.pretrain_steps"):
        reproduce.run(str(tmp_path), quick=True, only=["toy"], progress=False)


def test_book_tables_must_be_the_ones_declared(toy, monkeypatch):
    monkeypatch.setattr(toy_experiment, "book_tables", lambda result, settings, said: {"other": ""})
    with pytest.raises(ValueError, match=r"book_tables wrote \['other'\], BOOK_TABLES names \['toy'\]"):
        registry.get("toy").book_tables({}, {}, str)
