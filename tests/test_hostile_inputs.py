"""Model inputs and configurations that used to be misread silently or refused with a bare
Python message (issue 20)."""
import numpy as np
import pytest

from minishare.models import AlbertConfig, AlbertModel, TransformerConfig

from conftest import const

TINY = dict(vocab_size=30, embedding_size=8, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
            intermediate_size=32, max_position_embeddings=16)


@pytest.fixture(scope="module")
def model():
    return AlbertModel(AlbertConfig(**TINY)).eval()


IDS = np.arange(12).reshape(2, 6) % 30


@pytest.mark.parametrize("value", [0.5, -1.0, np.nan, -10000.0, 2])
def test_attention_mask_other_than_zero_and_one_is_refused(value, model):
    mask = np.ones((2, 6))
    mask[1, 4:] = value
    with pytest.raises(ValueError) as info:
        model(const(IDS), attention_mask=const(mask))
    message = str(info.value)
    assert "attention_mask" in message and "1 = attend" in message and "additive" in message, message


@pytest.mark.parametrize("dtype", [bool, np.int64, np.float32])
def test_attention_mask_of_zeros_and_ones_is_accepted_in_any_dtype(dtype, model):
    mask = np.ones((2, 6))
    mask[1, 4:] = 0
    got = model(const(IDS), attention_mask=const(mask.astype(dtype))).last_hidden_state
    want = model(const(IDS), attention_mask=const(mask.astype(bool))).last_hidden_state
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    # the padded keys are not attended to: changing their ids leaves the real tokens unchanged
    other = IDS.copy()
    other[1, 4:] = 0
    moved = model(const(other), attention_mask=const(mask.astype(dtype))).last_hidden_state
    np.testing.assert_allclose(moved.numpy()[1, :4], got.numpy()[1, :4], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("field, value, words", [
    ("hidden_act", ["gelu"], ["hidden_act", "one of"]),
    ("hidden_dropout_prob", "0.1", ["hidden_dropout_prob", "[0, 1)"]),
    ("layer_norm_eps", float("inf"), ["layer_norm_eps", "finite"]),
    ("layer_norm_eps", float("nan"), ["layer_norm_eps", "finite"]),
    ("hidden_size", 10 ** 12, ["hidden_size", "at most"]),
    ("initializer_range", "0.02", ["initializer_range", "number"]),
])
@pytest.mark.parametrize("cls", [AlbertConfig, TransformerConfig])
def test_config_fields_are_named_with_their_range(cls, field, value, words):
    fields = {k: v for k, v in TINY.items() if k != "embedding_size"} if cls is TransformerConfig else TINY
    with pytest.raises(ValueError) as info:
        cls(**{**fields, field: value})
    message = str(info.value)
    for word in words:
        assert word in message, (word, message)
