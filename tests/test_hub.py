"""Weights in Hugging Face's layout (minishare.models.hub): round trips, refusals, bad folders, and,
where PyTorch and transformers are installed (``torch`` marker), equality with Hugging Face's own
models on the same folder in float64."""
import json
import os
import pickle
import struct
import subprocess
import sys

import numpy as np
import pytest

import minishare
from minishare import backend
from minishare.analysis.params import count_parameters
from minishare.models import AlbertConfig, AlbertForPreTraining, AlbertModel, BertForPreTraining
from minishare.models.hub import HubError

from conftest import const, dev, host

safetensors_numpy = pytest.importorskip("safetensors.numpy")

TINY = dict(vocab_size=50, embedding_size=8, hidden_size=16, num_hidden_layers=4, num_attention_heads=2,
            intermediate_size=32, max_position_embeddings=20)


def _model(cls=AlbertForPreTraining, seed=0, **fields):
    """A float64 model whose every parameter (biases, LayerNorm gains too) is random, so a weight
    that lands under the wrong name changes the output."""
    model = cls(AlbertConfig(**{**TINY, **fields})).double()
    rng = np.random.default_rng(seed)
    for p in model.parameters():
        p.data = backend.asarray(rng.normal(0.0, 0.3, p.shape))
    return model.eval()


def _batch():
    rng = np.random.default_rng(1)
    ids = rng.integers(0, TINY["vocab_size"], (2, 7))
    types = np.repeat((np.arange(7) > 3).astype(np.int64)[None], 2, axis=0)
    mask = np.ones((2, 7), np.int64)
    mask[1, 5:] = 0                                     # padding in the second sequence
    return ids, types, mask


def _outputs(model):
    ids, types, mask = _batch()
    out = model.eval()(const(ids), attention_mask=const(mask), token_type_ids=const(types),
                       output_hidden_states=True)
    return host(out.hidden_states[-1]), host(out.prediction_logits), host(out.sop_logits)


def _assert_same(a, b, atol=0.0):
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=0, atol=atol)


# --- round trips ----------------------------------------------------------------------------------
@pytest.mark.parametrize("fields, groups", [
    (dict(sharing="all-shared"), 1),
    (dict(sharing="not-shared"), 4),
    (dict(sharing="sequence", num_unique_layers=2), 2),          # consecutive groups: A A B B
    (dict(sharing=[0, 0, 1, 1]), 2),
    (dict(embedding_size=16, embedding_projection=True, hidden_act="gelu"), 1),
    (dict(tie_word_embeddings=False, hidden_act="relu"), 1),
    (dict(sharing="cycle", num_unique_layers=2), 1),            # A B A B: one group of 2 layers
])
def test_round_trip_keeps_function_and_sharing(tmp_path, fields, groups):
    model = _model(**fields)
    model.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    inner = 2 if fields.get("sharing") == "cycle" else 1
    assert (config["model_type"], config["num_hidden_groups"], config["inner_group_num"],
            config["num_hidden_layers"]) == ("albert", groups, inner, 4 // inner)
    layers = {tuple(name.split(".")[3:6:2]) for name in
              safetensors_numpy.load_file(tmp_path / "model.safetensors") if ".albert_layer_groups." in name}
    assert layers == {(str(g), str(k)) for g in range(groups) for k in range(inner)}   # each once
    loaded = AlbertForPreTraining.from_pretrained(tmp_path)
    assert loaded.albert.pooler.weight.dtype == np.float64
    assert loaded.config.plan() == model.config.plan()
    assert count_parameters(loaded) == count_parameters(model)
    tied = loaded.predictions.decoder.weight is loaded.albert.embeddings.word_embeddings.weight
    assert tied == model.config.tie_word_embeddings
    _assert_same(_outputs(model), _outputs(loaded))


def test_ALBERT_with_E_equal_H_and_no_projection_is_saved_with_the_identity(tmp_path):
    """A BERT-shaped AlbertForPreTraining saves as ALBERT by default; ALBERT's layout always has the
    E -> H projection, so it is written as the identity: the loaded model has H² + H more
    parameters and computes the same function."""
    model = _model(embedding_size=16, sharing="not-shared", hidden_act="gelu")
    assert model.albert.embeddings.embedding_hidden_mapping_in is None
    model.save_pretrained(tmp_path)
    tensors = safetensors_numpy.load_file(tmp_path / "model.safetensors")
    np.testing.assert_array_equal(tensors["albert.encoder.embedding_hidden_mapping_in.weight"], np.eye(16))
    np.testing.assert_array_equal(tensors["albert.encoder.embedding_hidden_mapping_in.bias"], np.zeros(16))
    loaded = AlbertForPreTraining.from_pretrained(tmp_path)
    assert loaded.config.embedding_projection is True
    assert count_parameters(loaded) == count_parameters(model) + 16 * 16 + 16
    _assert_same(_outputs(model), _outputs(loaded), atol=1e-12)


def test_BERT_shaped_model_saves_as_BERT_when_asked_or_by_its_class(tmp_path):
    model = _model(embedding_size=16, sharing="not-shared", hidden_act="gelu")
    model.save_pretrained(tmp_path / "a", model_type="bert")
    bert = BertForPreTraining(model.config).double()
    bert.load_state_dict(model.state_dict())
    bert.save_pretrained(tmp_path / "b")
    for folder in ("a", "b"):
        config = json.loads((tmp_path / folder / "config.json").read_text())
        assert (config["model_type"], config["architectures"]) == ("bert", ["BertForPreTraining"])
        names = set(safetensors_numpy.load_file(tmp_path / folder / "model.safetensors"))
        assert "bert.encoder.layer.3.attention.self.query.weight" in names
        assert "cls.predictions.bias" in names and not any("mapping_in" in n for n in names)
        for cls in (BertForPreTraining, AlbertForPreTraining):
            loaded = cls.from_pretrained(tmp_path / folder)
            assert loaded.albert.embeddings.embedding_hidden_mapping_in is None
            _assert_same(_outputs(model), _outputs(loaded))


def test_base_model_reads_the_encoder_of_a_pretraining_folder(tmp_path):
    model = _model(sharing="sequence", num_unique_layers=2)
    model.save_pretrained(tmp_path / "full")
    encoder = AlbertModel.from_pretrained(tmp_path / "full")
    ids, types, mask = _batch()
    expected = host(model.albert(const(ids), const(mask), const(types)).last_hidden_state)
    np.testing.assert_array_equal(host(encoder(const(ids), const(mask), const(types)).last_hidden_state),
                                  expected)
    encoder.save_pretrained(tmp_path / "base")
    names = set(safetensors_numpy.load_file(tmp_path / "base" / "model.safetensors"))
    assert "embeddings.word_embeddings.weight" in names and not any(n.startswith("predictions") for n in names)
    again = AlbertModel.from_pretrained(tmp_path / "base")
    np.testing.assert_array_equal(host(again(const(ids), const(mask), const(types)).last_hidden_state), expected)
    with pytest.raises(HubError, match="without the pre-training heads; load it with AlbertModel"):
        AlbertForPreTraining.from_pretrained(tmp_path / "base")


def test_older_checkpoints_buffers_and_tensorflow_names_are_read(tmp_path):
    """Files converted long ago carry position_ids buffers, LayerNorm gamma/beta, the tied decoder
    weight and bias under their own names, and (albert-base-v2) no SOP head."""
    model = _model()
    model.save_pretrained(tmp_path)

    def age(tensors):
        for name in [n for n in tensors if "LayerNorm" in n]:
            tensors[name.replace(".weight", ".gamma").replace(".bias", ".beta")] = tensors.pop(name)
        tensors["albert.embeddings.position_ids"] = np.arange(20)[None]
        tensors["predictions.decoder.weight"] = tensors["albert.embeddings.word_embeddings.weight"]
        tensors["predictions.decoder.bias"] = tensors["predictions.bias"]
    _rewrite(tmp_path, age)
    _assert_same(_outputs(model), _outputs(AlbertForPreTraining.from_pretrained(tmp_path)))
    _rewrite(tmp_path, lambda t: (t.pop("sop_classifier.classifier.weight"), t.pop("sop_classifier.classifier.bias")))
    with pytest.raises(HubError, match="missing sop_classifier.*AlbertModel.from_pretrained reads the encoder"):
        AlbertForPreTraining.from_pretrained(tmp_path)
    ids, types, mask = _batch()
    np.testing.assert_array_equal(
        host(AlbertModel.from_pretrained(tmp_path).double()(const(ids), const(mask), const(types)).last_hidden_state),
        host(model.albert(const(ids), const(mask), const(types)).last_hidden_state))


def test_float32_stays_float32(tmp_path):
    model = AlbertForPreTraining(AlbertConfig(**TINY))
    model.save_pretrained(tmp_path)
    assert json.loads((tmp_path / "config.json").read_text())["dtype"] == "float32"
    loaded = AlbertForPreTraining.from_pretrained(tmp_path)
    assert {p.dtype for p in loaded.parameters()} == {np.dtype(np.float32)}
    assert {p.dtype for p in AlbertForPreTraining.from_pretrained(tmp_path, dtype=np.float64).parameters()} \
        == {np.dtype(np.float64)}


def _write_bfloat16(path, tensors):
    """A safetensors file written by hand from its specification (8-byte header length, JSON
    header, raw little-endian data), each float32 tensor cut to bfloat16: its upper 16 bits."""
    header, chunks, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, array in tensors.items():
        data = (np.ascontiguousarray(array, dtype="<f4").view("<u4") >> 16).astype("<u2").tobytes()
        header[name] = {"dtype": "BF16", "shape": list(array.shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(chunks))


def test_bfloat16_widens_exactly_to_float32(tmp_path):
    AlbertForPreTraining(AlbertConfig(**TINY)).save_pretrained(tmp_path)
    tensors = safetensors_numpy.load_file(tmp_path / "model.safetensors")
    _write_bfloat16(tmp_path / "model.safetensors", tensors)
    loaded = AlbertForPreTraining.from_pretrained(tmp_path)
    got = host(loaded.albert.pooler.weight.data)
    expected = (tensors["albert.pooler.weight"].view(np.uint32) & 0xFFFF0000).view(np.float32)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, expected)


# --- what the layout cannot hold ------------------------------------------------------------------
@pytest.mark.parametrize("fields, words", [
    (dict(sharing="cycle", num_unique_layers=3), "returns to set A at position 3"),    # A B C A
    (dict(sharing="cycle-rev", num_unique_layers=2), "returns to set A at position 3"),  # A B B A
    (dict(sharing="shared-attention"), "attention and FFN together"),
    (dict(sharing="shared-ffn"), "attention and FFN together"),
    (dict(sharing=[0, 0, 0, 1]), "groups of sizes 3, 1"),
    (dict(norm_position="pre"), "Post-LN"),
    (dict(timestep_signal=True), "timestep signal"),
])
def test_plans_hugging_face_cannot_express_are_refused(tmp_path, fields, words):
    with pytest.raises(HubError, match=words):
        _model(**fields).save_pretrained(tmp_path)
    assert not os.listdir(tmp_path)                       # nothing half-written


def test_bert_layout_refuses_what_is_not_a_bert(tmp_path):
    with pytest.raises(HubError, match="E = 8, H = 16"):
        _model().save_pretrained(tmp_path, model_type="bert")
    with pytest.raises(HubError, match="gives every layer its own parameters"):
        _model(embedding_size=16).save_pretrained(tmp_path, model_type="bert")
    with pytest.raises(ValueError, match="not a BERT"):
        BertForPreTraining(AlbertConfig(**TINY))
    _model().save_pretrained(tmp_path)                     # an ALBERT folder
    with pytest.raises(HubError, match="BertForPreTraining cannot hold this albert"):
        BertForPreTraining.from_pretrained(tmp_path)


# --- bad folders ----------------------------------------------------------------------------------
class _Trap:
    """Unpickling this creates a file: the proof that a loader unpickled."""
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_pytorch_pickles_are_refused_without_unpickling(tmp_path):
    marker = tmp_path / "unpickled"
    (tmp_path / "pytorch_model.bin").write_bytes(pickle.dumps(_Trap(str(marker))))
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "albert"}))
    for path in (tmp_path, tmp_path / "pytorch_model.bin"):
        with pytest.raises(HubError, match="PyTorch pickle.*save_pretrained.*safe_serialization=True") as err:
            AlbertForPreTraining.from_pretrained(path)
        assert "\n" not in str(err.value)
    assert not marker.exists()
    pickle.loads((tmp_path / "pytorch_model.bin").read_bytes())    # the trap works when unpickled
    assert marker.exists()


def test_missing_safetensors_package_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "safetensors", None)
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    with pytest.raises(ImportError, match="pip install safetensors"):
        _model().save_pretrained(tmp_path)


def test_import_minishare_needs_neither_safetensors_nor_torch():
    code = ("import sys, minishare, minishare.models, minishare.models.hub; "
            "assert not {'safetensors', 'torch', 'transformers'} & set(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "PYTHONPATH": os.getcwd()})


def _rewrite(folder, change):
    path = folder / "model.safetensors"
    tensors = safetensors_numpy.load_file(path)
    change(tensors)
    path.write_bytes(safetensors_numpy.save(tensors))


def test_bad_folders_get_errors_naming_the_problem(tmp_path):
    with pytest.raises(FileNotFoundError, match="no folder"):
        AlbertForPreTraining.from_pretrained(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match="has no config.json"):
        AlbertForPreTraining.from_pretrained(tmp_path)
    _model().save_pretrained(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, "model_type": "roberta"}))
    with pytest.raises(HubError, match="model_type 'roberta' is not one minishare reads"):
        AlbertForPreTraining.from_pretrained(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({**config, "hidden_act": "silu"}))
    with pytest.raises(HubError, match="hidden_act 'silu'"):
        AlbertForPreTraining.from_pretrained(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps(config))

    pooler = "albert.pooler.weight"
    _rewrite(tmp_path, lambda t: t.pop(pooler))
    with pytest.raises(HubError, match=f"missing {pooler}"):
        AlbertForPreTraining.from_pretrained(tmp_path)
    _rewrite(tmp_path, lambda t: t.update({pooler: np.zeros((16, 8)), "albert.extra": np.zeros(2)}))
    with pytest.raises(HubError, match=r"unexpected albert.extra.*albert.pooler.weight has shape \(16, 8\), "
                                       r"but config.json implies \(16, 16\)"):
        AlbertForPreTraining.from_pretrained(tmp_path)
    _rewrite(tmp_path, lambda t: (t.pop("albert.extra"), t.update({pooler: np.zeros((16, 16)),
                                                                   "predictions.decoder.bias": np.ones(50)})))
    with pytest.raises(HubError, match="predictions.decoder.bias differs from predictions.bias"):
        AlbertForPreTraining.from_pretrained(tmp_path)
    os.remove(tmp_path / "model.safetensors")
    with pytest.raises(FileNotFoundError, match="has no model.safetensors"):
        AlbertForPreTraining.from_pretrained(tmp_path)


# --- against Hugging Face's own models ------------------------------------------------------------
def _hf():
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    return torch, transformers


def _hf_outputs(torch, model):
    ids, types, mask = _batch()
    with torch.no_grad():
        out = model.eval()(input_ids=torch.tensor(ids), token_type_ids=torch.tensor(types),
                           attention_mask=torch.tensor(mask), output_hidden_states=True)
    second = out.sop_logits if hasattr(out, "sop_logits") else out.seq_relationship_logits
    return out.hidden_states[-1].numpy(), out.prediction_logits.numpy(), second.numpy()


def _hf_cases(transformers):
    shape = dict(vocab_size=50, hidden_size=16, num_attention_heads=2, intermediate_size=32,
                 max_position_embeddings=20)
    return {
        "albert all-shared, E < H": transformers.AlbertConfig(embedding_size=8, num_hidden_layers=3, **shape),
        "albert E = H": transformers.AlbertConfig(embedding_size=16, num_hidden_layers=2, hidden_act="gelu", **shape),
        "albert num_hidden_groups=2": transformers.AlbertConfig(embedding_size=8, num_hidden_layers=4,
                                                                num_hidden_groups=2, **shape),
        "albert inner_group_num=2": transformers.AlbertConfig(embedding_size=8, num_hidden_layers=4,
                                                              num_hidden_groups=2, inner_group_num=2, **shape),
        "albert untied": transformers.AlbertConfig(embedding_size=8, num_hidden_layers=2,
                                                   tie_word_embeddings=False, **shape),
        "bert": transformers.BertConfig(num_hidden_layers=2, **shape),
    }


@pytest.mark.torch
@pytest.mark.parametrize("case", ["albert all-shared, E < H", "albert E = H", "albert num_hidden_groups=2",
                                  "albert inner_group_num=2", "albert untied", "bert"])
def test_hugging_face_folders_in_and_out(tmp_path, case):
    """Hugging Face writes a folder, minishare reads it: the same outputs in float64. Then minishare
    writes, Hugging Face reads (with no missing or unexpected weights), the same outputs again."""
    torch, transformers = _hf()
    config = _hf_cases(transformers)[case]
    hf_class = getattr(transformers, "BertForPreTraining" if config.model_type == "bert" else "AlbertForPreTraining")
    torch.manual_seed(0)
    hf = hf_class(config).double()
    with torch.no_grad():                 # biases and LayerNorms away from 0 and 1
        for p in hf.parameters():
            p.add_(0.1 * torch.randn_like(p))
    hf.save_pretrained(tmp_path / "hf")
    ours = (BertForPreTraining if config.model_type == "bert" else AlbertForPreTraining).from_pretrained(tmp_path / "hf")
    expected = _hf_outputs(torch, hf)
    _assert_same(expected, _outputs(ours), atol=1e-10)
    ours.save_pretrained(tmp_path / "ours")
    written = set(safetensors_numpy.load_file(tmp_path / "ours" / "model.safetensors"))
    assert written == set(safetensors_numpy.load_file(tmp_path / "hf" / "model.safetensors"))
    back, info = hf_class.from_pretrained(tmp_path / "ours", dtype=torch.float64, output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"] and not info["mismatched_keys"]
    _assert_same(expected, _hf_outputs(torch, back), atol=1e-10)


@pytest.mark.torch
def test_hugging_face_bfloat16_folder_reads_as_its_float32_widening(tmp_path):
    torch, transformers = _hf()
    hf = transformers.AlbertForPreTraining(_hf_cases(transformers)["albert all-shared, E < H"]).to(torch.bfloat16)
    hf.save_pretrained(tmp_path)
    ours = AlbertForPreTraining.from_pretrained(tmp_path)
    got = host(ours.albert.embeddings.word_embeddings.weight.data)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, hf.albert.embeddings.word_embeddings.weight.detach().float().numpy())


@pytest.mark.torch
def test_defaults_for_absent_fields_are_hugging_faces(tmp_path):
    _, transformers = _hf()
    from minishare.models.hub import HF_DEFAULTS
    for model_type, cls in (("albert", transformers.AlbertConfig), ("bert", transformers.BertConfig)):
        hf = cls().to_dict()
        assert {field: hf[field] for field in HF_DEFAULTS[model_type]} == HF_DEFAULTS[model_type]


@pytest.mark.torch
@pytest.mark.parametrize("fields, model_type", [
    (dict(sharing="cycle", num_unique_layers=2), "albert"),       # one group of 2 inner layers
    (dict(sharing="sequence", num_unique_layers=2), "albert"),    # num_hidden_groups=2
    (dict(embedding_size=16, sharing="not-shared"), "albert"),    # the identity projection
    (dict(embedding_size=16, sharing="not-shared", hidden_act="gelu"), "bert"),
])
def test_minishare_plans_run_the_same_in_hugging_face(tmp_path, fields, model_type):
    torch, transformers = _hf()
    model = _model(**fields)
    model.save_pretrained(tmp_path, model_type=model_type)
    hf_class = getattr(transformers, "BertForPreTraining" if model_type == "bert" else "AlbertForPreTraining")
    hf, info = hf_class.from_pretrained(tmp_path, dtype=torch.float64, output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"] and not info["mismatched_keys"]
    _assert_same(_outputs(model), _hf_outputs(torch, hf), atol=1e-10)


# --- Figure 1 for a folder on disk ----------------------------------------------------------------
def test_layerwise_command_on_a_pretrained_folder(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from minishare import cli
    from minishare.analysis import layerwise
    model = _model(sharing="sequence", num_unique_layers=2)
    model.save_pretrained(tmp_path / "model")
    ids, _, mask = _batch()
    np.save(tmp_path / "ids.npy", ids)
    (tmp_path / "ids.txt").write_text("\n".join(" ".join(map(str, row[m == 1])) for row, m in zip(ids, mask)))
    # independent of the command: the encoder's own hidden states, measured directly
    full = layerwise.layer_transitions(model, [{"input_ids": dev(ids), "attention_mask": dev(mask)}])
    for name, expected in (("ids.npy", layerwise.layer_transitions(model, [{"input_ids": dev(ids)}])),
                           ("ids.txt", full)):
        out = tmp_path / name.replace(".", "_")
        assert cli.main(["layerwise", "--pretrained", str(tmp_path / "model"), "--input-ids",
                         str(tmp_path / name), "--out", str(out)]) == 0
        record = json.loads((out / "layerwise.json").read_text())
        np.testing.assert_allclose(record["l2"], expected["l2"], rtol=1e-12)
        np.testing.assert_allclose(record["cosine_degrees"], expected["cosine_degrees"], rtol=1e-12)
        assert (out / "layerwise.png").stat().st_size > 0 and record["layers"] == 4
    assert cli.main(["layerwise", "--pretrained", str(tmp_path / "model"), "--out", str(tmp_path / "r"),
                     "--batch-size", "2", "--seq-len", "6"]) == 0
    assert "used real text" in capsys.readouterr().out
    assert json.loads((tmp_path / "r" / "layerwise.json").read_text())["tokens"] == 12
    (tmp_path / "bad.txt").write_text("1 2 50\n")
    assert cli.main(["layerwise", "--pretrained", str(tmp_path / "model"), "--input-ids",
                     str(tmp_path / "bad.txt"), "--out", str(tmp_path / "x")]) == 2
    assert "ids must lie in 0..49" in capsys.readouterr().err


def _word_level_tokenizer(path, vocab):
    """A tokenizer.json as Hugging Face's tokenizers writes it: whole words, [CLS] ... [SEP]."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    tokenizer.save(str(path))


def test_layerwise_measures_real_text_through_the_folders_own_tokenizer(tmp_path, capsys, monkeypatch):
    pytest.importorskip("matplotlib")
    pytest.importorskip("tokenizers")
    import re
    from collections import Counter
    from minishare import cli
    from minishare.analysis import layerwise
    model = _model()                                               # V = 50
    model.save_pretrained(tmp_path / "model")
    passages = layerwise.text_passages(3, words=10)
    split = lambda text: re.findall(r"\w+|[^\w\s]+", text)        # the Whitespace pre-tokenizer's rule
    common = [w for w, _ in Counter(w for p in passages for w in split(p)).most_common(46)]
    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, **{w: 4 + i for i, w in enumerate(common)}}
    _word_level_tokenizer(tmp_path / "model" / "tokenizer.json", vocab)
    # by hand: [CLS], the first 8 words (1 = unknown), [SEP]: 10 tokens, no padding
    ids = np.array([[2] + [vocab.get(w, 1) for w in split(p)[:8]] + [3] for p in passages])
    expected = layerwise.layer_transitions(model, [{"input_ids": dev(ids)}])
    args = ["layerwise", "--pretrained", str(tmp_path / "model"), "--batch-size", "3", "--seq-len", "10"]
    assert cli.main(args + ["--out", str(tmp_path / "r")]) == 0
    assert "3 passages of the built-in English corpus" in capsys.readouterr().out
    record = json.loads((tmp_path / "r" / "layerwise.json").read_text())
    assert record["tokens"] == 30 and "English corpus" in record["input"]
    np.testing.assert_allclose(record["l2"], expected["l2"], rtol=1e-12)
    _word_level_tokenizer(tmp_path / "model" / "tokenizer.json", {**vocab, "[CLS]": 60})   # not this model's
    assert cli.main(args + ["--out", str(tmp_path / "x")]) == 2
    assert "gives token id 60" in capsys.readouterr().err and not (tmp_path / "x").exists()
    monkeypatch.setitem(sys.modules, "tokenizers", None)          # the package missing: random ids, said why
    assert cli.main(args + ["--out", str(tmp_path / "y")]) == 0
    assert "pip install tokenizers" in capsys.readouterr().out


@pytest.mark.torch
@pytest.mark.parametrize("embedding_size, model_type", [(8, "albert"), (16, "albert"), (16, "bert")])
def test_base_model_folders_open_in_hugging_faces_AutoModel(tmp_path, embedding_size, model_type):
    torch, transformers = _hf()
    model = _model(AlbertModel, embedding_size=embedding_size, sharing="not-shared")
    model.save_pretrained(tmp_path, model_type=model_type)
    hf, info = transformers.AutoModel.from_pretrained(tmp_path, dtype=torch.float64, output_loading_info=True)
    assert type(hf).__name__ == {"albert": "AlbertModel", "bert": "BertModel"}[model_type]
    assert not any(info.values())
    ids, types, mask = _batch()
    with torch.no_grad():
        expected = hf(input_ids=torch.tensor(ids), token_type_ids=torch.tensor(types),
                      attention_mask=torch.tensor(mask)).last_hidden_state.numpy()
    np.testing.assert_allclose(host(model(const(ids), const(mask), const(types)).last_hidden_state), expected,
                               rtol=0, atol=1e-10)
