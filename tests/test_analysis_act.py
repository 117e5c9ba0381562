"""Ponder time per token (``minishare.analysis.act``) and its figure."""
import numpy as np
import pytest

import minishare
from minishare import backend
from minishare.analysis import act
from minishare.models import DecoderLM, EncoderDecoderModel, TransformerConfig


def config(**overrides):
    fields = dict(vocab_size=11, hidden_size=8, num_hidden_layers=3, num_attention_heads=2,
                  intermediate_size=16, max_position_embeddings=8, sharing="universal",
                  timestep_signal=True, act=True)
    return TransformerConfig(**{**fields, **overrides})


def build(cls, cfg):
    minishare.manual_seed(0)
    model = cls(cfg).double()
    rng = np.random.default_rng(1)
    for p in model.parameters():
        p.data = backend.asarray(backend.to_numpy(p.data) + 0.5 * rng.standard_normal(p.shape))
    return model


SRC = np.array([[4, 5, 6], [7, 8, 0]])
TGT_IN = np.array([[1, 4, 5, 6], [1, 7, 0, 0]])


def test_ponder_times_are_n_plus_r_of_each_real_token_and_nan_at_padding():
    model = build(EncoderDecoderModel, config())
    times = act.ponder_times(model, SRC, TGT_IN, attention_mask=SRC != 0)
    assert model.training                                   # restored after measuring
    out = model(SRC, TGT_IN, attention_mask=SRC != 0)
    for name, ponder, pad in (("encoder", out.encoder_ponder, SRC == 0), ("decoder", out.decoder_ponder, TGT_IN == 0)):
        expected = backend.to_numpy(ponder.n_updates) + ponder.remainder.numpy()
        assert np.isnan(times[name][pad]).all()
        np.testing.assert_allclose(times[name][~pad], expected[~pad], atol=1e-12)
        assert ((2 <= times[name][~pad]) & (times[name][~pad] <= 4)).all()       # [2, N + 1], N = 3


def test_ponder_times_of_a_decoder_lm_and_of_a_model_without_act():
    times = act.ponder_times(build(DecoderLM, config()), TGT_IN)
    assert list(times) == ["decoder"] and times["decoder"].shape == (2, 4) and not np.isnan(times["decoder"]).any()
    with pytest.raises(ValueError, match="act=True"):
        act.ponder_times(build(DecoderLM, config(act=False)), TGT_IN)


def test_means_by_position_and_by_token_worked_by_hand():
    times = np.array([[2.0, 3.0, np.nan], [4.0, 2.5, 3.5]])
    ids = np.array([[5, 6, 0], [6, 6, 5]])
    np.testing.assert_allclose(act.mean_by_position(times), [3.0, 2.75, 3.5])
    by_token = act.mean_by_token(times, ids, ["<pad>", "", "", "", "", "a", "b"])
    assert by_token == {"a": (2.75, 2), "b": (pytest.approx(19 / 6), 3)}


def test_ponder_figure_is_titled_labelled_and_has_a_legend():
    mpl = pytest.importorskip("matplotlib")
    from minishare.analysis import act_figure
    fig = act_figure.plot_ponder_time([("example 1, source", ["1", "+", "2"], [2.0, 3.5, 2.2])],
                                      {"encoder": [[2.0, 3.0], [2.2, 3.4]], "decoder": [[2.5], [2.7, 2.1]]},
                                      max_steps=4, title="ponder")
    assert isinstance(fig, mpl.figure.Figure) and fig.get_suptitle() == "ponder"
    strip, curves = fig.axes[0], fig.axes[1]
    for ax in (strip, curves):
        assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()
    assert "ponder time" in fig.axes[2].get_xlabel()                          # the colour bar, below
    assert [t.get_text() for t in strip.texts] == ["1", "+", "2"]
    assert len(fig.legends[0].get_texts()) == 4                               # mean and band per stack
    np.testing.assert_allclose(curves.lines[0].get_ydata(), [2.1, 3.2])        # mean over the two seeds
    with pytest.raises(ValueError):
        act_figure.plot_ponder_time([], {}, 4, "t")
