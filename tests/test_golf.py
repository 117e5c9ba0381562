"""The class competition (``minishare.golf``), checked against numbers worked out by hand here.

Bytes: a tiny DecoderLM's tensors listed from its architecture (embedding V·H; per distinct layer
Q, K, V, O weights and biases, two LayerNorms, the FFN's two weights and biases; the final
LayerNorm), each distinct one once. Bits per byte: a model whose logits are uniform costs log2 V
bits a token, on two documents whose bytes and tokens are counted by hand. Training runs are tiny:
a model of H = 8 for a few steps.
"""
import json
import math
from pathlib import Path

import numpy as np
import pytest

from minishare import backend
from minishare.data import Tokenizer
from minishare.golf import budget, quantize, run as golf_run, score
from minishare.golf.entry import load_entry, parse_entry
from minishare.models import DecoderLM, TransformerConfig
from minishare.nn import Module, init
from minishare.tensor import Tensor
from minishare.train import Trainer
from test_run_workflow import run as run_cli

V, H, F = 10, 4, 8
# one distinct layer: Q, K, V, O (H × H and H each), its LayerNorm (2H); FFN H -> F -> H with biases,
# its LayerNorm (2H). Rows: one per output of each matrix, one per 1-D tensor.
LAYER_VALUES = (4 * H * H + 4 * H + 2 * H) + (F * H + F + H * F + H + 2 * H)        # 88 + 84 = 172
LAYER_ROWS = (4 * H + 4 + 2) + (F + 1 + H + 1 + 2)                                 # 22 + 16 = 38
EMBEDDING_VALUES, EMBEDDING_ROWS = V * H, V                                       # 40, 10
FINAL_NORM_VALUES, FINAL_NORM_ROWS = 2 * H, 2                                     # pre-LN's last LayerNorm


def tiny_model(sharing="all-shared", tie=True, N=3):
    with init.shape_only():
        return DecoderLM(TransformerConfig(vocab_size=V, hidden_size=H, num_attention_heads=1, intermediate_size=F,
                                           num_hidden_layers=N, sharing=sharing, norm_position="pre",
                                           tie_word_embeddings=tie, max_position_embeddings=16))


def by_hand(layers, tie, precision):
    values = EMBEDDING_VALUES * (1 if tie else 2) + layers * LAYER_VALUES + FINAL_NORM_VALUES
    rows = EMBEDDING_ROWS * (1 if tie else 2) + layers * LAYER_ROWS + FINAL_NORM_ROWS
    return {"float32": 4 * values, "float16": 2 * values, "int8": values + 4 * rows}[precision]


@pytest.mark.parametrize("precision", ["float32", "float16", "int8"])
def test_bytes_count_each_distinct_tensor_once(precision):
    # all-shared N = 3 stores one layer; not-shared three; untied pays for a second V × H table
    assert budget.stored_bytes(tiny_model("all-shared"), precision) == by_hand(1, True, precision)
    assert budget.stored_bytes(tiny_model("not-shared"), precision) == by_hand(3, True, precision)
    assert budget.stored_bytes(tiny_model("all-shared", tie=False), precision) == by_hand(1, False, precision)


def test_bytes_by_hand_in_numbers():
    # 220 values, 50 rows: 880 bytes at float32, 440 at float16, 220 + 4 · 50 = 420 at int8
    assert [budget.stored_bytes(tiny_model(), p) for p in ("float32", "float16", "int8")] == [880, 440, 420]


# --- the declaration --------------------------------------------------------------------------------
TINY = {"name": "tiny", "precision": "float32",
        "model": {"vocab_size": 64, "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2,
                  "intermediate_size": 16, "sharing": "not-shared"},
        "recipe": {"lr": 0.01, "warmup_steps": 1, "batch_size": 4, "seq_len": 16, "steps": 3, "seed": 0}}


def with_(section, **fields):
    entry = json.loads(json.dumps(TINY))
    (entry if section is None else entry[section]).update(fields)
    return entry


@pytest.mark.parametrize("entry, words", [
    (with_(None, hacks=1), "unknown field hacks"),
    (with_("model", hidden_sizes=8), "unknown field model.hidden_sizes"),
    (with_(None, corpus="my_text.txt"), "corpus asks for outside data"),
    (with_("recipe", train_file="/etc/passwd"), "recipe.train_file asks for outside data"),
    (with_("model", pretrained="albert-base"), "model.pretrained asks for outside data"),
    (with_("recipe", lr="0.01"), "recipe.lr must be a number in (0, 1]"),
    (with_("recipe", steps=0), "recipe.steps must be a positive int"),
    (with_("model", hidden_size=8.0), "hidden_size must be a positive int"),
    (with_("model", num_attention_heads=3), "num_attention_heads"),
    (with_(None, precision="int4"), "precision must be one of float32, float16, int8"),
    (with_(None, model=[1, 2]), "model must be a JSON object"),
])
def test_a_bad_entry_gets_one_clear_error(entry, words):
    with pytest.raises(ValueError) as error:
        parse_entry(entry, "entry.json")
    message = str(error.value)
    assert message.startswith("entry.json: ") and words in message and "\n" not in message


def test_a_step_too_large_for_the_cpu_limit_is_refused_before_training():
    """Bytes bound the parameters, not the work: one all-shared layer at 4,000 positions is a few
    KiB. A step of it (TINY's batch: 4 x 16 tokens) is about 3 * 64 * (4,000 * (4*64 + 2*128 +
    2*16*8) + 8*64) = 589,922,304 multiply-accumulates, under the limit, but it holds
    4 * 16 * 4,000 * (8*8 + 2*16) + 4 * 2 * 4,000 * 16**2 = 32,768,000 activation values ... so a
    batch 16 times larger is refused by the second count, naming both."""
    deep = with_("model", num_hidden_layers=4000, sharing="all-shared")
    parse_entry(deep, "entry.json")                      # 32,768,000 values: allowed
    deep["recipe"].update(batch_size=64)                  # 524,288,000 values: refused
    with pytest.raises(ValueError) as error:
        parse_entry(deep, "entry.json")
    message = str(error.value)
    assert "524,288,000 activation values" in message and "between steps" in message and "\n" not in message


@pytest.mark.parametrize("section, field", [(None, "name"), ("model", "hidden_act"), ("model", "sharing"),
                                            ("recipe", "optimizer"), ("recipe", "schedule")])
def test_code_in_a_declaration_is_refused_and_never_runs(tmp_path, section, field):
    marker = tmp_path / "ran"
    code = f"__import__('os').system('touch {marker}')"
    with pytest.raises(ValueError, match=field):
        parse_entry(with_(section, **{field: code}), "entry.json")
    assert not marker.exists()


# --- the grader -------------------------------------------------------------------------------------
def test_an_entry_over_budget_is_refused_before_training(monkeypatch):
    steps = []

    def train_step(self):                # counts the steps instead of training
        steps.append(self.step)
        self.step += 1
        return 0.0, {}
    monkeypatch.setattr(Trainer, "train_step", train_step)
    # V = 64, H = 8, F = 16, one layer, tied, float32: 64·8 + (4·64 + 4·8 + 16) + (2·8·16 + 16 + 8 + 16)
    # + 16 = 512 + 304 + 296 + 16 = 1,128 values, 4,512 bytes
    with pytest.raises(ValueError, match=r"stores 4,512 bytes at float32, over the budget of 4,511 bytes"):
        golf_run.grade(parse_entry(TINY), budget_bytes=4511)
    assert steps == []
    row = golf_run.grade(parse_entry(TINY), budget_bytes=4512)        # exactly at the budget: trained
    assert row["bytes"] == 4512 and steps == [0, 1, 2]


def test_an_entry_past_its_cpu_limit_is_stopped_and_scored(monkeypatch):
    clock = iter(range(1000))            # a CPU clock that advances one second a reading
    monkeypatch.setattr(golf_run.time, "process_time", lambda: float(next(clock)))
    row = golf_run.grade(parse_entry(with_("recipe", steps=50)), cpu_seconds=2.5)
    # start at 0; readings 1 and 2 are under 2.5 (two steps), reading 3 is not: stopped
    assert row["steps_done"] == 2 and row["stopped_at_limit"] and row["steps"] == 50
    assert math.isfinite(row["bits_per_byte"]) and row["bits_per_byte"] > 0


def test_same_entry_and_seed_give_the_same_bits_per_byte():
    first, again = (golf_run.grade(parse_entry(TINY))["bits_per_byte"] for _ in range(2))
    other_seed = golf_run.grade(parse_entry(with_("recipe", seed=1)))["bits_per_byte"]
    assert first == again and other_seed != first


def test_the_hidden_test_split_is_scored_and_never_given_to_training(monkeypatch):
    given = []

    class Recorded(golf_run.LanguageModelingTask):
        def __init__(self, train_documents, eval_documents, *args, **kwargs):
            given.extend(train_documents + eval_documents)
            super().__init__(train_documents, eval_documents, *args, **kwargs)
    monkeypatch.setattr(golf_run, "LanguageModelingTask", Recorded)
    row = golf_run.grade(parse_entry(with_("recipe", steps=1)), split="test")
    test = golf_run.splits.golf_splits()["test"]
    assert given and not {tuple(d) for d in given} & {tuple(d) for d in test}
    # the bytes scored are the test stories' text, a newline after each, counted here
    assert row["scored_bytes"] == sum(len(" ".join(d).encode("utf-8")) + 1 for d in test)


def test_the_test_split_is_half_the_held_out_stories_and_never_trained_on():
    parts = golf_run.splits.golf_splits()
    train = {s for d in parts["train"] for s in d}
    assert len(parts["validation"]) == len(parts["test"]) == 100       # 200 held out of 2,000
    assert all(train.isdisjoint(d) for d in parts["validation"] + parts["test"])
    assert not {tuple(d) for d in parts["validation"]} & {tuple(d) for d in parts["test"]}


@pytest.mark.parametrize("limits, words", [(dict(budget_bytes=0), "the byte budget must be a positive int"),
                                           (dict(cpu_seconds=-1), "the CPU-time limit must be a number of seconds > 0")])
def test_the_graders_limits_are_checked(limits, words):
    with pytest.raises(ValueError, match=words):
        golf_run.grade(parse_entry(TINY), **limits)


def test_the_example_entries_fit_the_budget():
    examples = sorted((Path(golf_run.__file__).parent / "examples").glob("*.json"))
    entries = {e.model["sharing"]: e for e in map(load_entry, examples)}
    assert set(entries) == {"not-shared", "all-shared"}
    for entry in entries.values():     # V = 256: the grammar corpus has more merges than that to learn
        assert budget.entry_bytes(entry, 256) <= golf_run.BUDGET_BYTES
    # ALBERT-style: more layer positions in fewer bytes
    shared, baseline = entries["all-shared"], entries["not-shared"]
    assert shared.model["num_hidden_layers"] > baseline.model["num_hidden_layers"]
    assert budget.entry_bytes(shared, 256) < budget.entry_bytes(baseline, 256)


# --- storage at a precision -------------------------------------------------------------------------
def test_int8_rows_by_hand_and_its_error_bound():
    q, s = quantize.int8_rows(np.array([[127.0, -63.0, 0.25], [0.0, 0.0, 0.0]]))
    # row 0: s = 127 / 127 = 1, q = round(w) = 127, -63, 0; a zero row: s = 0, read back as zeros
    assert s.dtype == np.float32 and s.tolist() == [1.0, 0.0] and q.dtype == np.int8
    assert q.tolist() == [[127, -63, 0], [0, 0, 0]]
    w = np.random.default_rng(0).normal(size=(6, 50)) * np.array([[1e-3], [1], [5], [0.1], [20], [1e-6]])
    q, s = quantize.int8_rows(w)
    error = np.abs(w - quantize.int8_read_back(q, s))
    assert (error <= s[:, None] / 2 * (1 + 1e-6)).all()
    assert (np.abs(q).max(axis=1) == 127).all()          # each row's largest magnitude uses the full range


def test_float16_reads_back_the_nearest_half():
    # 1/3 = 1.0101010101|01... × 2^-2 in binary: ten bits of mantissa round down to 0.333251953125
    assert quantize.read_back(np.array([1 / 3]), "float16").tolist() == [0.333251953125]


def test_quantize_puts_every_distinct_tensor_on_its_int8_grid():
    model = DecoderLM(TransformerConfig(vocab_size=V, hidden_size=H, num_attention_heads=1, intermediate_size=F,
                                        num_hidden_layers=3, sharing="all-shared", max_position_embeddings=16))
    quantize.quantize_(model, "int8")
    for p in model.parameters():
        w = backend.to_numpy(p.data).astype(np.float64).reshape(-1, p.shape[-1])
        step = np.abs(w).max(axis=1, keepdims=True) / 127
        assert np.allclose(w / np.where(step > 0, step, 1), np.rint(w / np.where(step > 0, step, 1)), atol=1e-3)


# --- bits per byte ----------------------------------------------------------------------------------
DOCUMENTS = [["Où?"], ["Là."]]        # "Où?\n" and "Là.\n": 1 + 2 + 1 + 1 = 5 bytes each (ù, à: 2 in UTF-8)


def char_tokenizer():
    """No merges: the 5 special tokens and the 6 characters, V = 11; one token a character."""
    return Tokenizer.train(["Où? Là."], vocab_size=5 + 7)   # 7: O, ù, ?, space, L, à, .


class Uniform(Module):
    """Logits 0 everywhere (uniform), or ln 3 on [SEP] after '.' or '?' (a sentence's end)."""

    def __init__(self, tokenizer, ends=False):
        super().__init__()
        self.tokenizer, self.ends = tokenizer, ends

    def forward(self, ids):
        logits = np.zeros(ids.shape + (self.tokenizer.vocab_size,))
        if self.ends:
            ends = np.isin(ids, [self.tokenizer.encode(c)[0] for c in ".?"])
            logits[..., self.tokenizer.sep_id] = np.where(ends, math.log(3), 0.0)
        return type("Output", (), {"logits": Tensor(backend.asarray(logits))})


def test_windows_cover_every_target_once():
    pairs = score.windows(np.arange(9), 3)
    assert [(x.tolist(), y.tolist()) for x, y in pairs] == [([0, 1, 2], [1, 2, 3]), ([3, 4, 5], [4, 5, 6]),
                                                          ([6, 7], [7, 8])]


@pytest.mark.parametrize("seq_len", [3, 64])
def test_uniform_logits_cost_log2_v_bits_a_token(seq_len):
    tokenizer = char_tokenizer()
    assert tokenizer.vocab_size == 12
    result = score.bits_per_byte(Uniform(tokenizer), DOCUMENTS, tokenizer, seq_len)
    # targets: O ù ? [SEP] L à . [SEP] = 8 tokens for 10 bytes
    assert (result["tokens"], result["bytes"]) == (8, 10)
    assert result["bits_per_byte"] == pytest.approx(8 * math.log2(12) / 10, rel=1e-12)


def test_bits_per_byte_reads_each_target_after_its_context():
    tokenizer = char_tokenizer()
    result = score.bits_per_byte(Uniform(tokenizer, ends=True), DOCUMENTS, tokenizer, 3)
    # after '?' and '.' the target is [SEP], with p = 3 / (3 + 11); the 6 other targets p = 1/12
    bits = 2 * math.log2(14 / 3) + 6 * math.log2(12)
    assert result["bits_per_byte"] == pytest.approx(bits / 10, rel=1e-12)


def test_a_real_model_with_zero_embeddings_is_uniform():
    tokenizer = char_tokenizer()
    model = DecoderLM(TransformerConfig(vocab_size=12, hidden_size=H, num_attention_heads=1, intermediate_size=F,
                                        num_hidden_layers=2, max_position_embeddings=8))
    model.embeddings.word_embeddings.weight.data = backend.xp.zeros((12, H), dtype=backend.default_dtype)
    result = score.bits_per_byte(model, DOCUMENTS, tokenizer, 4)     # tied: the output table is zero
    assert result["bits_per_byte"] == pytest.approx(8 * math.log2(12) / 10, rel=1e-6)


def test_a_character_never_seen_in_training_is_refused():
    with pytest.raises(ValueError, match="held-out document 1 has characters the tokenizer never saw"):
        score.bits_per_byte(Uniform(char_tokenizer()), [["Où?"], ["Zut."]], char_tokenizer(), 8)


# --- the command line -------------------------------------------------------------------------------


def test_golf_prints_the_score_and_three_budgets(tmp_path, capsys):
    path = tmp_path / "entry.json"
    path.write_text(json.dumps(TINY))
    status, out, err = run_cli(capsys, "golf", path, "--no-progress")
    assert status == 0, err
    assert "bytes:   4,512 of 65,536 at float32" in out
    assert "3 of 3 steps" in out and "training split of grammar only (1800 documents), V = 64" in out
    assert "validation bits per byte:" in out


@pytest.mark.parametrize("entry, words", [(with_(None, corpus="x.txt"), "corpus asks for outside data"),
                                          (TINY, "stores 4,512 bytes at float32, over the budget of 4,000")])
def test_golf_refuses_in_one_line(tmp_path, capsys, entry, words):
    path = tmp_path / "entry.json"
    path.write_text(json.dumps(entry))
    status, out, err = run_cli(capsys, "golf", path, "--budget-bytes", 4000, "--no-progress")
    assert status == 2 and words in err and err.count("\n") == 1 and out == ""
