"""The competition's code track (``minishare.grader.golf_code``): a student's own ``model.py``.

The scoring protocol is checked in this process against independent numbers (a uniform model's
bits per byte worked out by hand, and ``golf.score``'s one pass over the windows); the rest runs a
module in the sandbox, as the grader does: a module that builds the declared TINY model must get
the declared entry's bits per byte, and modules over the budget, past the CPU limit, drawing text
of their own or reading other windows are refused with their reason.
"""
import json
import math
import os

import numpy as np
import pytest

from minishare import backend, manual_seed
from minishare.errors import InvalidValue
from minishare.golf import run as golf_run, score
from minishare.golf.entry import parse_entry
from minishare.grader import golf_code
from minishare.grader.sandbox import Sandbox
from minishare.tensor import no_grad
from test_golf import TINY

pytestmark = pytest.mark.skipif(backend.name != "numpy", reason="the sandbox's worker runs on NumPy: the "
                                                                "NumPy run of the suite covers it")

CODE_TWIN = {**TINY, "name": "tiny as code", "model": {"code": "model.py", "vocab_size": 64}}
# TINY's declared model, built by a module; what it prints cannot change its value
TWIN_SOURCE = """from minishare.models import DecoderLM, TransformerConfig

print("bits per byte: 0.0001")


def build(vocab_size, seq_len):
    return DecoderLM(TransformerConfig(vocab_size=vocab_size, hidden_size=8, num_hidden_layers=1,
                                       num_attention_heads=2, intermediate_size=16,
                                       max_position_embeddings=seq_len))
"""


def submit(folder, source, entry=CODE_TWIN):
    os.makedirs(folder)
    with open(os.path.join(folder, "entry.json"), "w", encoding="utf-8") as f:
        json.dump(entry, f)
    with open(os.path.join(folder, "model.py"), "w", encoding="utf-8") as f:
        f.write(source)
    return str(folder)


@pytest.fixture(scope="module")
def box():
    with Sandbox(allow_root=True) as sandbox:      # as root, the worker runs as root: our own files only
        yield sandbox


@pytest.fixture(scope="module")
def data():
    parts, tokenizer = golf_run.prepare(parse_entry(TINY))
    return parts["validation"][:12], tokenizer


def test_a_code_entry_declares_its_module_and_nothing_of_the_model_else():
    entry = parse_entry(CODE_TWIN)
    assert entry.code == "model.py" and entry.model == {"code": "model.py", "vocab_size": 64}
    with pytest.raises(InvalidValue, match="must be 'model.py'"):
        parse_entry({**CODE_TWIN, "model": {"code": "../grader.py"}})
    with pytest.raises(InvalidValue, match="unknown field model.hidden_size"):
        parse_entry({**CODE_TWIN, "model": {"code": "model.py", "hidden_size": 8}})
    with pytest.raises(InvalidValue, match="code-track entry"):
        golf_run.grade(entry)


def test_a_uniform_model_scores_log2_V_per_token(data):
    documents, tokenizer = data
    V = tokenizer.vocab_size
    result = golf_code.rounds_bits_per_byte(lambda c: np.zeros((len(c), V)), documents, tokenizer, 16,
                                            np.random.default_rng(0))
    ids, text = score.held_out_stream(documents, tokenizer)
    by_hand = (len(ids) - 1) * math.log2(V) / len(text.encode("utf-8"))
    assert result["bits_per_byte"] == pytest.approx(by_hand, rel=1e-12)


def test_asking_one_position_at_a_time_gives_the_one_pass_score(data):
    documents, tokenizer = data
    manual_seed(3)
    model = golf_run.designs.build(parse_entry(TINY), tokenizer.vocab_size)
    model.eval()
    seen = []

    def predict(contexts):                    # never shown a token it is asked to predict
        seen.append(contexts.shape[1])
        with no_grad():
            return model(contexts).logits.numpy()[:, -1].astype(np.float64) + 5.0     # unnormalized
    rounds = golf_code.rounds_bits_per_byte(predict, documents, tokenizer, 16, np.random.default_rng(0))
    one_pass = score.bits_per_byte(model, documents, tokenizer, 16)
    assert rounds["bits_per_byte"] == pytest.approx(one_pass["bits_per_byte"], rel=1e-9)
    assert sorted(set(seen)) == list(range(1, 17))


def test_a_model_that_reads_the_other_windows_is_refused(data):
    documents, tokenizer = data
    V = tokenizer.vocab_size

    def peeking(contexts):                    # each window's prediction leans on the batch's tokens
        counts = np.bincount(contexts.ravel(), minlength=V)[None, :].astype(float)
        return np.log1p(np.repeat(counts, len(contexts), axis=0))
    with pytest.raises(InvalidValue, match="asked again with other windows beside it"):
        golf_code.rounds_bits_per_byte(peeking, documents, tokenizer, 16, np.random.default_rng(0))


@pytest.mark.slow
def test_a_module_of_the_declared_model_gets_the_declared_score(box, tmp_path):
    row = golf_code.grade(parse_entry(CODE_TWIN), submit(tmp_path / "twin", TWIN_SOURCE), "validation", box=box)
    direct = golf_run.grade(parse_entry(TINY), "validation")
    assert row["bits_per_byte"] == pytest.approx(direct["bits_per_byte"], rel=1e-7)
    assert row["bytes"] == direct["bytes"] + len(TWIN_SOURCE.encode()) and row["steps_done"] == 3
    assert 0 < row["train_cpu_seconds"] < 60


@pytest.mark.slow
def test_a_module_over_the_budget_is_refused_before_training(box, tmp_path):
    source = TWIN_SOURCE.replace("hidden_size=8", "hidden_size=512") + (
        "\n\nclass Never(Exception):\n    pass\n\n\nDecoderLM.forward = lambda *a, **k: (_ for _ in ()).throw(Never())\n")
    with pytest.raises(InvalidValue) as refused:
        golf_code.grade(parse_entry(CODE_TWIN), submit(tmp_path / "big", source), "validation", box=box,
                        budget_bytes=20_000)
    said = str(refused.value)
    assert "over the budget of 20,000 bytes; refused before training" in said and "Never" not in said
    count = int(said.split(" stores ")[1].split(" bytes")[0].replace(",", ""))
    assert count > 20_000 * 10           # 512-wide: some 1.6 MB at float32


@pytest.mark.slow
def test_an_entry_past_its_cpu_time_is_stopped_and_scored_on_what_it_had(box, tmp_path):
    entry = {**CODE_TWIN, "recipe": {**CODE_TWIN["recipe"], "steps": 10 ** 6}}
    row = golf_code.grade(parse_entry(entry), submit(tmp_path / "long", TWIN_SOURCE, entry), "validation", box=box,
                          cpu_seconds=2.0)
    assert row["stopped_at_limit"] and 0 < row["steps_done"] < 10 ** 6 and math.isfinite(row["bits_per_byte"])


@pytest.mark.slow
def test_a_module_that_ignores_the_cpu_limit_is_killed_by_the_kernel(box, tmp_path, monkeypatch):
    monkeypatch.setattr(golf_code, "STARTUP_CPU", 4.0)
    source = TWIN_SOURCE + "\n\nDecoderLM.forward = lambda *a, **k: next(x for x in iter(int, 1) if x)\n"   # spins
    with pytest.raises(InvalidValue, match="kernel's limit of 5 CPU seconds"):
        golf_code.grade(parse_entry(CODE_TWIN), submit(tmp_path / "spin", source), "validation", box=box,
                        cpu_seconds=1.0)


@pytest.mark.slow
@pytest.mark.parametrize("call", ["minishare.data.grammar_corpus(10, seed=0)",
                                  "minishare.golf.splits.golf_splits('grammar')"])
def test_a_module_that_draws_text_of_its_own_is_refused(box, tmp_path, call):
    source = "import minishare.data\nimport minishare.golf.splits\n" + TWIN_SOURCE.replace(
        "    return DecoderLM(", f"    {call}\n    return DecoderLM(")
    with pytest.raises(InvalidValue, match="forbids"):
        golf_code.grade(parse_entry(CODE_TWIN), submit(tmp_path / "own", source), "validation", box=box)


def test_the_code_track_refuses_natural_text(tmp_path):
    with pytest.raises(InvalidValue, match="grammar corpus only"):
        golf_code.grade(parse_entry(CODE_TWIN), submit(tmp_path / "doc", TWIN_SOURCE), "validation", corpus="default")
