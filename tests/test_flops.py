"""FLOPs per token (``minishare.analysis.flops``) against numbers counted by hand for a tiny
configuration, and against the multiply-accumulates of the matrix products a forward pass of the
model actually runs (counted here by wrapping the two product ops)."""
import numpy as np
import pytest

import minishare
from minishare.analysis import flops
from minishare.models import AlbertConfig, AlbertForPreTraining
from minishare.ops import matmul


def tiny(**overrides):
    return AlbertConfig(**{**dict(vocab_size=11, embedding_size=4, hidden_size=8, num_hidden_layers=2,
                                  num_attention_heads=2, intermediate_size=16, max_position_embeddings=8),
                           **overrides})


def test_tiny_config_counted_by_hand():
    # V = 11, E = 4, H = 8, I = 16, N = 2, T = 5
    got = flops.macs_per_token(tiny(), seq_len=5)
    assert got["embedding projection"] == 4 * 8                 # 32
    assert got["attention projections"] == 2 * 4 * 8 * 8        # 512: Q, K, V, output per layer
    assert got["attention scores"] == 2 * 2 * 5 * 8             # 160: q·k over 5 keys, weights × values
    assert got["FFN"] == 2 * 2 * 8 * 16                         # 512
    assert got["MLM head"] == 8 * 4 + 4 * 11                    # 76: dense H -> E, scores against V
    assert got["pooler and classifier"] == (64 + 16) / 5        # 16 per token: once per sequence
    assert got["total"] == 1308
    assert flops.flops_per_token(tiny(), 5) == 2 * 1308
    assert flops.flops_per_token(tiny(), 5, training=True) == 6 * 1308


def test_bert_has_no_projection_and_sharing_changes_nothing():
    bert = flops.macs_per_token(tiny(embedding_size=8, sharing="not-shared"), seq_len=5)
    assert bert["embedding projection"] == 0
    assert flops.macs_per_token(tiny(sharing="not-shared"), 5) == flops.macs_per_token(tiny(), 5)


def test_albert_xxlarge_has_fewer_parameters_than_bert_large_but_computes_more():
    rows = {r["name"]: r for r in flops.preset_table()}
    xx, large = rows["albert-xxlarge"], rows["bert-large"]
    assert xx["parameters"] < large["parameters"]
    # 12 layers of 12·H² (H = 4,096) against 24 of 12·H² (H = 1,024): 8× in the layers alone
    assert 6 < xx["flops_vs_bert-large"] < 8
    assert large["flops_vs_bert-large"] == 1.0


@pytest.mark.parametrize("overrides, T", [({}, 5), (dict(embedding_size=8, num_hidden_layers=3), 7),
                                          (dict(sharing="not-shared", num_attention_heads=4), 6)])
def test_formula_equals_the_products_the_model_runs(monkeypatch, overrides, T):
    counted = []

    def wrap(cls, macs):
        forward = cls.forward

        def counting(self, a, b, *rest):
            counted.append(macs(a, b))
            return forward(self, a, b, *rest)
        monkeypatch.setattr(cls, "forward", counting)
    # (..., n, k) @ (..., k, m): n·k·m per batch entry; linear: rows × in × out
    wrap(matmul.MatMul, lambda a, b: int(np.prod(np.broadcast_shapes(a.shape[:-2], b.shape[:-2])))
         * a.shape[-2] * a.shape[-1] * b.shape[-1])
    wrap(matmul.Linear, lambda x, w: int(np.prod(x.shape[:-1])) * w.shape[0] * w.shape[1])
    config = tiny(**overrides)
    minishare.manual_seed(0)
    model = AlbertForPreTraining(config)
    B = 3
    ids = np.random.default_rng(0).integers(1, 11, (B, T))
    with minishare.no_grad():
        model(input_ids=ids)
    assert sum(counted) / (B * T) == pytest.approx(flops.macs_per_token(config, T)["total"], rel=1e-12)


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="AlbertConfig"):
        flops.macs_per_token({"hidden_size": 8})
    with pytest.raises(ValueError, match="seq_len"):
        flops.macs_per_token(tiny(), seq_len=0)
