"""The competition's looped and relaxed entries and its natural-text setting (``minishare.golf``),
checked against counts worked out by hand here.

The tiny model is test_golf's (V = 10, H = 4, F = 8, one head, tied, Pre-LN): one distinct layer of
172 values in 38 rows (4·16 + 16 + 8 = 88 for attention and its norm, 32 + 8 + 32 + 4 + 8 = 84 for the FFN
and its norm), the embedding's 40 values in 10 rows, the final LayerNorm's 8 in 2. A
relaxation of rank r = 2 adds, at each of its N = 3 positions, to each Linear A (r, in) and B (out, r):
the four attention projections (4 → 4) 8 + 8 values in 2 + 4 rows each, the FFN's first layer (4 → 8)
8 + 16 values in 2 + 8 rows, its second (8 → 4) 16 + 8 values in 2 + 4 rows: 112 values in 40 rows
a position.
"""
import json

import numpy as np
import pytest

from minishare.errors import InvalidValue
from minishare.golf import budget, designs, run as golf_run, splits
from minishare.golf.entry import parse_entry
from minishare.models import DecoderLM
from minishare.sharing import COMPONENTS, Plan
from minishare.tasks import LanguageModelingTask

from conftest import dev, host

SHARED_VALUES, SHARED_ROWS = 172 + 40 + 8, 38 + 10 + 2        # one layer, the embedding, the final norm: 220, 50
LORA_VALUES, LORA_ROWS = 4 * 16 + 24 + 24, 4 * 6 + 10 + 6      # per position, rank 2: 112 values, 40 rows


def tiny(precision="float32", vocab_size=10, **model):
    return parse_entry({"name": "tiny", "precision": precision,
                        "model": {"vocab_size": vocab_size, "hidden_size": 4, "num_hidden_layers": 3, "num_attention_heads": 1,
                                  "intermediate_size": 8, "sharing": "all-shared", "norm_position": "pre",
                                  "tie_word_embeddings": True, **model},
                        "recipe": {"lr": 0.01, "warmup_steps": 1, "batch_size": 4, "seq_len": 16, "steps": 3}})


@pytest.mark.parametrize("precision, expected", [
    ("float32", 4 * (SHARED_VALUES + 3 * LORA_VALUES)),                                  # 4 · 556 = 2,224
    ("float16", 2 * (SHARED_VALUES + 3 * LORA_VALUES)),
    ("int8", SHARED_VALUES + 3 * LORA_VALUES + 4 * (SHARED_ROWS + 3 * LORA_ROWS))])     # 556 + 4 · 170 = 1,236
def test_relaxed_bytes_count_the_shared_layer_once_and_every_positions_lora(precision, expected):
    entry = tiny(precision, relaxation_rank=2)
    assert budget.entry_bytes(entry, 10) == expected
    # the model trained is the one counted: its distinct tensors, by identity, give the same bytes
    assert budget.stored_bytes(designs.build(entry, 10), precision) == expected


def test_relaxed_numbers_by_hand():
    assert budget.entry_bytes(tiny("float32", relaxation_rank=2), 10) == 2224
    assert budget.entry_bytes(tiny("int8", relaxation_rank=2), 10) == 1236


def test_looped_bytes_do_not_grow_with_test_iterations():
    assert budget.entry_bytes(tiny(test_iterations=12), 10) == 4 * SHARED_VALUES == budget.entry_bytes(tiny(), 10)


def _at_depth(entry, model, r):
    """An independent model of r positions holding ``model``'s trained arrays (the test's own
    construction: a DecoderLM built at that depth, its arrays replaced by the trained ones)."""
    deeper = DecoderLM(entry.config(10, layers=r))
    trained = dict(model.lm.named_parameters())
    for name, p in deeper.named_parameters():
        p.data = trained[name].data
    return deeper.eval()


def test_looped_model_is_scored_at_the_test_depth_with_the_trained_tensors():
    entry = tiny(test_iterations=6)
    model = designs.build(entry, 10)
    ids = dev(np.array([[1, 2, 3, 4, 5]]))
    model.eval()
    scored = host(model(ids).logits)
    assert np.allclose(scored, host(_at_depth(entry, model, 6)(ids).logits), atol=1e-6)
    # 6 positions of the shared layer are 3 more applications than the trained mean: the logits differ
    assert not np.allclose(scored, host(_at_depth(entry, model, 3)(ids).logits))
    model.train()        # in training, the batch's draw decides (here 2), else the mean N = 3
    assert np.allclose(host(model(ids, iterations=2).logits), host(_at_depth(entry, model, 2)(ids).logits), atol=1e-6)
    assert np.allclose(host(model(ids).logits), host(_at_depth(entry, model, 3)(ids).logits), atol=1e-6)


def test_looped_training_draws_its_depth_per_batch_and_keeps_the_windows():
    parts, tokenizer = golf_run.prepare(tiny(vocab_size=64))
    plain = LanguageModelingTask(parts["train"], parts["validation"], tokenizer, 4, 16, seed=3)
    looped = LanguageModelingTask(parts["train"], parts["validation"], tokenizer, 4, 16, seed=3, mean_iterations=3)
    draws = [looped.batch(i)["iterations"] for i in range(200)]
    assert all(isinstance(r, int) and r >= 1 for r in draws) and len(set(draws)) > 2
    assert abs(np.mean(draws) - 3) < 0.4                   # E[r] = r̄ (nn.looped.sample_iterations)
    assert draws == [looped.batch(i)["iterations"] for i in range(200)]      # a function of (seed, index)
    assert all(np.array_equal(plain.batch(i)["input_ids"], looped.batch(i)["input_ids"]) for i in range(5))
    assert "iterations" not in plain.batch(0)


def test_a_looped_entry_needs_a_trained_mean_of_two():
    with pytest.raises(InvalidValue, match="mean num_hidden_layers, which must be at least 2, got 1"):
        tiny(num_hidden_layers=1, test_iterations=4)


def test_a_stack_loops_only_onto_a_plan_with_its_own_sets():
    stack = designs.build(tiny(test_iterations=6), 10).lm.decoder
    assert stack.loop(Plan.build("all-shared", 9)).plan.n_layers == 9
    with pytest.raises(InvalidValue, match="looping needs a plan with the stack's sets"):
        stack.loop(Plan.build("not-shared", 2))


@pytest.mark.parametrize("model, words", [
    ({"test_iterations": 6, "sharing": "not-shared"}, 'model.test_iterations needs "sharing": "all-shared"'),
    ({"test_iterations": 2}, "model.test_iterations must be an int >= 3"),
    ({"test_iterations": 65}, "model.test_iterations must be an int >= 3 (at most 64)"),
    ({"test_iterations": "6"}, "model.test_iterations must be an int"),
    ({"relaxation_rank": 0}, "model.relaxation_rank must be a positive int (at most 4)"),
    ({"relaxation_rank": 5}, "model.relaxation_rank must be a positive int (at most 4)"),
    ({"relaxation_rank": 2, "sharing": "not-shared"}, "model.relaxation_rank needs a sharing plan that shares"),
    ({"relaxation_rank": 2, "test_iterations": 6}, "model.test_iterations and model.relaxation_rank exclude"),
])
def test_bad_golf_fields_are_refused_in_one_line_naming_the_field(model, words):
    with pytest.raises(InvalidValue) as err:
        tiny(**model)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_a_relaxed_model_shares_its_weights_and_has_a_correction_per_position():
    model = designs.build(tiny(relaxation_rank=2), 10)
    assert all(model.decoder.shared_plan.n_sets(c) == 1 for c in COMPONENTS)
    first, last = (model.decoder.set_at("attention", p).sublayer.query for p in (0, 2))
    assert first.weight is last.weight and first.lora_A is not last.lora_A
    assert first.lora_A.shape == (2, 4) and first.lora_B.shape == (4, 2)


def test_looped_and_relaxed_entries_are_graded(tmp_path):
    for entry in (tiny(vocab_size=64, relaxation_rank=2), tiny("int8", vocab_size=64, test_iterations=6)):
        row = golf_run.grade(entry, cpu_seconds=60)
        assert row["bytes"] == budget.entry_bytes(entry, row["vocab_size"]) and row["steps_done"] == 3
        assert np.isfinite(row["bits_per_byte"]) and row["test_iterations"] == entry.test_iterations


def test_the_natural_text_setting_is_the_default_corpus_split_three_ways():
    parts = splits.golf_splits("default")
    texts = {k: {json.dumps(d) for d in v} for k, v in parts.items()}
    assert texts["train"].isdisjoint(texts["validation"]) and texts["train"].isdisjoint(texts["test"])
    assert texts["validation"].isdisjoint(texts["test"]) and min(map(len, texts.values())) > 0
    assert any("Python" in splits.document_text(d) for d in parts["train"])
    with pytest.raises(InvalidValue, match="must be one of grammar, default, got 'grammar-facts'"):
        splits.golf_splits("grammar-facts")
