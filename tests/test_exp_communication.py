"""The communication experiment: the bytes counted against hand-worked parameter counts, the ring
formula, and the 2-rank timing (skipped without mpi4py and mpiexec)."""
import json

import pytest

from minishare.experiments import exp_communication as exp
from minishare.experiments.settings import QUICK

pytest.importorskip("matplotlib")


def test_counted_bytes_at_the_albert_base_shape_by_hand():
    c = exp.counted()
    # not-shared has 11 more layers than all-shared; one layer at H = 768, FFN I = 3072: attention
    # 4 (H^2 + H), two LayerNorms 4H, FFN 2HI + I + H
    H, I = 768, 3072
    layer = 4 * (H * H + H) + 4 * H + 2 * H * I + I + H
    assert c["not-shared"]["parameters"] - c["all-shared"]["parameters"] == 11 * layer
    # all-shared = ALBERT-base as its Table 1 counts it (11,683,584: encoder and pooler) + the MLM
    # head (H -> E dense, LayerNorm(E), a bias of V = 30,000; its weight is the tied embedding) + SOP
    E, V = 128, 30_000
    assert c["all-shared"]["parameters"] == 11_683_584 + (H * E + E) + 2 * E + V + (2 * H + 2)
    assert all(r["bytes"] == 4 * r["parameters"] for r in c.values())


def test_ring_allreduce_bytes():
    assert exp.ring_bytes(100, 2) == 100 and exp.ring_bytes(100, 4) == 150 and exp.ring_bytes(160, 16) == 300


def test_without_mpi_the_result_says_why(tmp_path, monkeypatch):
    monkeypatch.setattr(exp, "_missing_mpi", lambda: "mpi4py is not installed (pip install mpi4py mpich)")
    result = json.loads(json.dumps(exp.run(str(tmp_path), QUICK, progress=False)))
    assert result["timed"] is None
    text = exp.report(result, exp.figures(result, str(tmp_path)))
    assert "pip install mpi4py mpich" in text and "| all-shared | 11,813,810 |" in text


@pytest.mark.skipif(exp._missing_mpi() is not None, reason="needs mpi4py and mpiexec")
def test_two_ranks_are_timed(tmp_path):
    result = json.loads(json.dumps(exp.run(str(tmp_path), QUICK, progress=False)))
    timed = result["timed"]
    for name in exp.VARIANTS:
        assert len(timed["times"][name]["allreduce_wall"]) == exp.TIMING[True]["rounds"]
    # the buffer of the timed models: 4 bytes per distinct parameter, one flag per tensor, the values
    sizes = timed["buffer_bytes"]
    assert sizes["not-shared"] > sizes["shared-attention"] > sizes["shared-ffn"] > sizes["all-shared"]
    assert all(sizes[v] > 4 * timed["parameters"][v] for v in exp.VARIANTS)
    figures = exp.figures(result, str(tmp_path))
    assert (tmp_path / "communication.png").exists() and len(figures) == 1
    assert "Allreduce / compute" in exp.report(result, figures) and len(exp.observations(result)) == 3
    assert len(exp.claims(result, QUICK.seeds)) == 4      # the timed comparisons go to the ledger
