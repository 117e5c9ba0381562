"""The reproduce pipeline: report, figures and the cache (only the experiments that train nothing,
so this stays fast; CI runs the whole --quick job)."""
import os

import pytest

pytest.importorskip("matplotlib")

from minishare.experiments import exp_params, reproduce  # noqa: E402
from minishare.experiments.settings import FULL, QUICK  # noqa: E402

CHEAP = ["params", "plans"]


def test_report_embeds_the_figures_and_tables(tmp_path):
    path = reproduce.run(str(tmp_path), quick=True, only=CHEAP, progress=False)
    text = open(path).read()
    assert "## Parameter counts" in text and "## The sharing plans" in text
    assert "11,683,584" in text and "| 12M" in text          # ALBERT-base, ours beside the paper's
    n = QUICK.seq2seq["num_hidden_layers"]                   # cycle-rev with M = n, N = 2n
    letters = [chr(ord("A") + i) for i in range(n)]
    assert " ".join(letters + letters[::-1]) in text
    for line in text.splitlines():
        if line.startswith("!["):
            png = line[line.index("](") + 2:-1]
            assert os.path.exists(tmp_path / png), png
            assert os.path.exists(tmp_path / png.replace(".png", ".svg"))
    assert "## Convergence" not in text                      # not run, not cached: not reported


def test_a_second_run_redraws_from_the_cache(tmp_path, monkeypatch):
    reproduce.run(str(tmp_path), quick=True, only=CHEAP, progress=False)

    def must_not_run(*args, **kwargs):
        raise AssertionError("a cached experiment ran again")
    monkeypatch.setattr(exp_params, "run", must_not_run)
    text = open(reproduce.run(str(tmp_path), quick=True, only=CHEAP, progress=False)).read()
    assert "11,683,584" in text


def test_other_settings_do_not_reuse_the_cache(tmp_path):
    reproduce.run(str(tmp_path), quick=True, only=["plans"], progress=False)
    folder = str(tmp_path / "plans")
    assert reproduce._cached(folder, QUICK) is not None
    assert reproduce._cached(folder, FULL) is None


def test_unknown_experiment_is_named(tmp_path):
    with pytest.raises(ValueError, match="unknown experiment.*bogus"):
        reproduce.run(str(tmp_path), quick=True, only=["bogus"], progress=False)
