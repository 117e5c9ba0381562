"""Tests of exercise 10 with states built by hand: rotations by known angles, scalings by known
factors, padding that must not count, and a model whose layers are made to do nothing."""
import math

import numpy as np
import pytest

import minishare
from minishare.models import AlbertConfig, AlbertModel
from layerwise import layer_transitions, model_transitions, token_transitions


def rotated(theta, scale=1.0):
    """(1, 1, 3): e1, and e1 rotated by theta in the e1-e2 plane and scaled."""
    return (np.array([[[1.0, 0.0, 0.0]]]),
            scale * np.array([[[math.cos(theta), math.sin(theta), 0.0]]]))


@pytest.mark.ex10_task1
def test_orthogonal_and_opposite_vectors():
    d, a = token_transitions(*rotated(math.pi / 2))
    assert d[0, 0] == pytest.approx(math.sqrt(2)) and a[0, 0] == pytest.approx(90.0)
    d, a = token_transitions(*rotated(math.pi, scale=2.0))
    assert d[0, 0] == pytest.approx(3.0) and a[0, 0] == pytest.approx(180.0)


@pytest.mark.ex10_task1
def test_tiny_angles_are_accurate():
    for theta in (1e-7, 1e-5, 0.01):
        _, a = token_transitions(*rotated(theta, scale=3.0))
        assert a[0, 0] == pytest.approx(math.degrees(theta), rel=1e-6), theta


@pytest.mark.ex10_task2
def test_means_skip_padding():
    h0 = np.zeros((1, 2, 2)); h0[0, :, 0] = 1.0                     # two tokens along e1
    h1 = h0.copy(); h1[0, 0] = [0.0, 1.0]; h1[0, 1] = [-5.0, 0.0]   # real: 90°, padding: 180°
    result = layer_transitions([h0, h1], attention_mask=np.array([[1, 0]]))
    assert result["degrees"] == pytest.approx([90.0]) and result["l2"] == pytest.approx([math.sqrt(2)])


@pytest.mark.ex10_task3
def test_model_runs_in_eval_mode_and_gives_n_values():
    minishare.manual_seed(0)
    config = AlbertConfig(vocab_size=20, embedding_size=4, hidden_size=8, num_hidden_layers=3,
                          num_attention_heads=2, intermediate_size=16, max_position_embeddings=8,
                          hidden_dropout_prob=0.5)
    model = AlbertModel(config)
    ids = np.array([[1, 2, 3, 4]])
    a, b = model_transitions(model, ids), model_transitions(model, ids)
    assert a == b and len(a["l2"]) == 3 and len(a["degrees"]) == 3     # no dropout: repeatable
    assert model.training


### BEGIN HIDDEN TESTS
@pytest.mark.ex10_task1
def test_same_direction_is_zero_degrees():
    h = np.random.default_rng(0).standard_normal((2, 3, 5))
    assert (token_transitions(h, h)[1] == 0).all()                 # a layer that changes nothing
    d, a = token_transitions(h, 2.5 * h)
    assert (a < 1e-6).all()
    np.testing.assert_allclose(d, 1.5 * np.linalg.norm(h, axis=-1))


@pytest.mark.ex10_task2
def test_layers_average_over_examples_token_by_token():
    h0 = np.zeros((2, 1, 2)); h0[:, 0, 0] = 1.0
    h1 = h0.copy(); h1[0, 0] = [0.0, 1.0]                            # 90° for one token, 0° for the other
    h2 = h1.copy()
    result = layer_transitions([h0, h1, h2])
    assert result["degrees"] == pytest.approx([45.0, 0.0])
    assert result["l2"] == pytest.approx([math.sqrt(2) / 2, 0.0])


@pytest.mark.ex10_task3
def test_a_model_with_identity_layers_changes_nothing():
    """Zero every sublayer's output weights: each residual adds zero, Pre-LN leaves x as it is."""
    minishare.manual_seed(1)
    config = AlbertConfig(vocab_size=20, embedding_size=8, hidden_size=8, num_hidden_layers=2,
                          num_attention_heads=2, intermediate_size=16, max_position_embeddings=8,
                          norm_position="pre", sharing="not-shared")
    model = AlbertModel(config)
    for name, p in model.named_parameters():
        if name.endswith(("dense.weight", "dense.bias", "ffn_output.weight", "ffn_output.bias")) and "encoder" in name:
            p.data = p.data * 0
    result = model_transitions(model, np.array([[1, 2, 3]]), attention_mask=np.array([[1, 1, 1]]))
    assert result["l2"] == pytest.approx([0.0, 0.0], abs=1e-6)
    assert result["degrees"] == pytest.approx([0.0, 0.0], abs=1e-4)
### END HIDDEN TESTS
