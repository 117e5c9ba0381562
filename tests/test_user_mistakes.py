"""One clear error, naming the argument, for every user mistake (issue 13).

Each case is a mistake a student makes (a mask of the wrong shape, a plain list, a config value
that cannot work, a string where a list of texts belongs). The error must be a ValueError or
TypeError (the CLI turns those into one line) whose message names the argument; before the fix
these failed deep inside an op (IndexError, AttributeError, a broadcasting error) or were accepted.
"""
import subprocess
import sys

import numpy as np
import pytest

from minishare import data
from minishare.models import (AlbertConfig, AlbertForPreTraining, DecoderLM, EncoderDecoderModel,
                              TransformerConfig)

from conftest import const

V = 30


@pytest.fixture(scope="module")
def albert():
    return AlbertForPreTraining(AlbertConfig.from_preset("albert-tiny", vocab_size=V, hidden_size=16,
                                                         num_attention_heads=2, intermediate_size=32,
                                                         num_hidden_layers=1))


def _transformer_config():
    return TransformerConfig(vocab_size=V, hidden_size=16, num_attention_heads=2, intermediate_size=32,
                             num_hidden_layers=1)


@pytest.fixture(scope="module")
def seq2seq():
    return EncoderDecoderModel(_transformer_config())


@pytest.fixture(scope="module")
def lm():
    return DecoderLM(_transformer_config())


def ids(*shape):
    return const(np.ones(shape, dtype=np.int64))


ALBERT_CASES = [   # (keyword arguments of AlbertForPreTraining.forward, the words the error names)
    (dict(input_ids=ids(2, 5), attention_mask=ids(2, 4)), ["attention_mask", "(2, 4)", "(2, 5)"]),
    (dict(input_ids=ids(2, 5), attention_mask=ids(5)), ["attention_mask", "(5,)"]),
    (dict(input_ids=ids(2, 5), token_type_ids=ids(2, 4)), ["token_type_ids", "(2, 4)"]),
    (dict(input_ids=ids(2, 5), labels=ids(2, 4)), ["labels", "(2, 4)"]),
    (dict(input_ids=ids(2, 5), sentence_order_label=ids(3)), ["sentence_order_label", "(3,)"]),
    (dict(input_ids=ids(2, 0)), ["input_ids", "empty"]),
    (dict(input_ids=ids(0, 5)), ["input_ids", "empty"]),
    (dict(input_ids=[[1, 2, 3]]), ["input_ids", "list"]),
    (dict(input_ids=ids(5)), ["input_ids", "(5,)"]),
    (dict(input_ids=ids(2, 5), attention_mask=[[1, 1, 1, 1, 1]] * 2), ["attention_mask", "list"]),
]


@pytest.mark.parametrize("kwargs, words", ALBERT_CASES)
def test_albert_inputs_are_checked_by_name(kwargs, words, albert):
    with pytest.raises((ValueError, TypeError)) as error:
        albert(**kwargs)
    for word in words:
        assert word in str(error.value), (word, str(error.value))


SEQ2SEQ_CASES = [
    (dict(input_ids=ids(2, 5), decoder_input_ids=ids(3, 4)), ["decoder_input_ids", "batch", "3", "2"]),
    (dict(input_ids=[[1, 2]], decoder_input_ids=[[1, 2]]), ["input_ids", "list"]),
    (dict(input_ids=ids(2, 5), decoder_input_ids=ids(2, 4), labels=ids(2, 5)), ["labels", "(2, 5)"]),
    (dict(input_ids=ids(2, 5), decoder_input_ids=ids(2, 4), attention_mask=ids(2, 4)),
     ["attention_mask", "(2, 4)"]),
    (dict(input_ids=ids(2, 5), decoder_input_ids=ids(4)), ["decoder_input_ids", "(4,)"]),
]


@pytest.mark.parametrize("kwargs, words", SEQ2SEQ_CASES)
def test_encoder_decoder_inputs_are_checked_by_name(kwargs, words, seq2seq):
    with pytest.raises((ValueError, TypeError)) as error:
        seq2seq(**kwargs)
    for word in words:
        assert word in str(error.value), (word, str(error.value))


LM_CASES = [
    (dict(input_ids=ids(5)), ["input_ids", "(5,)", "(batch, seq_len)"]),
    (dict(input_ids=ids(2, 5), labels=ids(2, 4)), ["labels", "(2, 4)"]),
    (dict(input_ids=[[1, 2, 3]]), ["input_ids", "list"]),
]


@pytest.mark.parametrize("kwargs, words", LM_CASES)
def test_decoder_lm_inputs_are_checked_by_name(kwargs, words, lm):
    with pytest.raises((ValueError, TypeError)) as error:
        lm(**kwargs)
    for word in words:
        assert word in str(error.value), (word, str(error.value))


def test_correct_inputs_still_run(albert, seq2seq, lm):
    """The checks refuse only mistakes: well-shaped inputs (arrays or tensors) go through."""
    out = albert(np.ones((2, 5), dtype=np.int64), attention_mask=np.ones((2, 5)),
                 token_type_ids=ids(2, 5), labels=ids(2, 5), sentence_order_label=ids(2))
    assert out.prediction_logits.shape == (2, 5, V)
    assert seq2seq(ids(2, 5), ids(2, 4), attention_mask=ids(2, 5), labels=ids(2, 4)).logits.shape == (2, 4, V)
    assert lm(ids(2, 5), labels=ids(2, 5)).logits.shape == (2, 5, V)


CONFIG_CASES = [
    (AlbertConfig, dict(layer_norm_eps=0.0), "layer_norm_eps"),
    (AlbertConfig, dict(layer_norm_eps=-1e-5), "layer_norm_eps"),
    (AlbertConfig, dict(initializer_range=-0.02), "initializer_range"),
    (AlbertConfig, dict(type_vocab_size=0), "type_vocab_size"),
    (AlbertConfig, dict(tie_word_embeddings="no"), "tie_word_embeddings"),
    (TransformerConfig, dict(layer_norm_eps=0.0), "layer_norm_eps"),
    (TransformerConfig, dict(initializer_range=-1.0), "initializer_range"),
    (TransformerConfig, dict(tie_word_embeddings=1), "tie_word_embeddings"),
]


@pytest.mark.parametrize("cls, fields, name", CONFIG_CASES)
def test_config_values_that_cannot_work_are_refused(cls, fields, name):
    with pytest.raises((ValueError, TypeError), match=name):
        cls(**fields)


TOKENIZER_CASES = [
    (lambda: data.Tokenizer.train("the cat sat on the mat", vocab_size=40), ["texts", "str"]),
    (lambda: data.Tokenizer.train(["the cat"], vocab_size=40.5), ["vocab_size", "40.5"]),
    (lambda: data.Tokenizer.train(["the cat"], vocab_size="40"), ["vocab_size", "'40'"]),
]


@pytest.mark.parametrize("make, words", TOKENIZER_CASES)
def test_tokenizer_arguments_are_checked_by_name(make, words):
    with pytest.raises((ValueError, TypeError)) as error:
        make()
    for word in words:
        assert word in str(error.value), (word, str(error.value))


def test_byte_order_mark_is_not_kept_in_loaded_text(tmp_path):
    """Windows editors start UTF-8 files with U+FEFF; it is not part of the text."""
    path = tmp_path / "notes.txt"
    path.write_bytes("\ufeffHello there. How are you?\n".encode("utf-8"))
    documents = data.load_text(path)
    assert documents[0][0] == "Hello there."


@pytest.mark.parametrize("value, words", [("tpu", ["MINISHARE_BACKEND", "tpu", "numpy"]),
                                          ("cupy", ["MINISHARE_BACKEND", "cupy"])])
def test_bad_backend_variable_is_one_line_not_an_import_traceback(value, words):
    """``MINISHARE_BACKEND=tpu python -m minishare count``: one line, no traceback."""
    if value == "cupy":
        try:
            import cupy  # noqa: F401
            pytest.skip("CuPy is installed here, so the cupy backend may well be available")
        except ImportError:
            pass
    import os
    env = {**os.environ, "MINISHARE_BACKEND": value}
    done = subprocess.run([sys.executable, "-m", "minishare", "count"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
