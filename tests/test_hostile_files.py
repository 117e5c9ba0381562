"""Hostile and careless files (issue 20): no hang, no unbounded allocation, no silent wrong load.

Every case that could hang (a FIFO) or allocate without bound (sizes read from a file) runs in a
subprocess with a timeout and an address-space cap, so a regression fails the test instead of
hanging the suite or exhausting the machine.
"""
import json
import os
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

from minishare import checkpoint, data
from minishare.checkpoint import CheckpointError
from minishare.errors import InvalidValue
from minishare.models import AlbertConfig, AlbertForPreTraining
from minishare.models.hub import HubError
from minishare.run import build

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = dict(vocab_size=50, embedding_size=8, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
            intermediate_size=32, max_position_embeddings=20)


def bounded(code, timeout=60, memory=2 << 30):
    """Run ``code`` (it prints its outcome) in a fresh interpreter with its address space capped
    at ``memory`` bytes; the outcome, or "HANG" if it did not return within ``timeout`` s."""
    script = (f"import resource\nresource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory}))\n"
              + textwrap.dedent(code))
    env = {**os.environ, "PYTHONPATH": ROOT, "OPENBLAS_NUM_THREADS": "1"}
    try:
        done = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "HANG"
    return done.stdout + done.stderr


def outcome_of(call):
    """Code that runs ``call`` (a Python expression) and prints the exception it raises."""
    return f"""
try:
    {call}
    print("RETURNED")
except MemoryError as err:
    print("MemoryError", err)
except Exception as err:
    print(type(err).__name__ + ":", err)
"""


def saved_folder(tmp_path, name="model", **fields):
    pytest.importorskip("safetensors")
    folder = tmp_path / name
    AlbertForPreTraining(AlbertConfig(**{**TINY, **fields})).save_pretrained(folder)
    return folder


def load_st(path):
    import safetensors.numpy
    return safetensors.numpy.load_file(str(path))


def save_st(path, tensors):
    import safetensors.numpy
    with open(path, "wb") as f:
        f.write(safetensors.numpy.save(tensors))


def edit_config(folder, **fields):
    config = json.loads((folder / "config.json").read_text())
    config.update(fields)
    (folder / "config.json").write_text(json.dumps(config))


# --- only regular files are read --------------------------------------------------------------------
def test_index_naming_a_fifo_as_a_shard_is_refused_not_waited_on(tmp_path):
    folder = saved_folder(tmp_path)
    os.remove(folder / "model.safetensors")
    os.mkfifo(folder / "shard.safetensors")
    (folder / "model.safetensors.index.json").write_text(json.dumps(
        {"weight_map": {"albert.pooler.weight": "shard.safetensors"}}))
    out = bounded("from minishare.models import AlbertForPreTraining\n"
                  + outcome_of(f"AlbertForPreTraining.from_pretrained({str(folder)!r})"), timeout=30)
    assert out.startswith("HubError:") and "shard.safetensors" in out and "FIFO" in out, out


@pytest.mark.parametrize("kind", ["fifo", "symlink to /dev/zero"])
def test_corpus_folder_with_a_fifo_or_a_device_is_refused_naming_it(kind, tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.txt").write_text("One sentence here. Another one there.\n")
    bad = folder / "b.txt"
    if kind == "fifo":
        os.mkfifo(bad)
    else:
        os.symlink("/dev/zero", bad)
    out = bounded("from minishare import data\n" + outcome_of(f"data.load_text({str(folder)!r})"), timeout=30)
    assert out.startswith("InvalidValue:") and "b.txt" in out, out
    assert ("FIFO" if kind == "fifo" else "device") in out, out


def test_a_corpus_of_one_document_is_refused_before_the_tokenizer_is_trained(tmp_path, monkeypatch):
    """A run holds documents out: a file with no blank line is one document, refused as it is read
    (on a 300 MB file, after the tokenizer's training, the refusal came some 100 s late)."""
    (tmp_path / "one.txt").write_text("The cat sat. The dog ran.\nThe end came.\n" * 50)
    monkeypatch.setattr(build, "load_tokenizer", lambda *a, **k: pytest.fail("the tokenizer was trained"))
    with pytest.raises(InvalidValue) as info:
        build.make_task("lm", 0, 4, 16, corpus=str(tmp_path / "one.txt"))
    assert "one.txt" in str(info.value) and "1 document" in str(info.value) and "at least 2" in str(info.value)


def test_tokenizer_file_that_is_a_fifo_is_refused(tmp_path):
    os.mkfifo(tmp_path / "tokenizer.json")
    out = bounded("from minishare import data\n"
                  + outcome_of(f"data.Tokenizer.load({str(tmp_path / 'tokenizer.json')!r})"), timeout=30)
    assert out.startswith("InvalidValue:") and "tokenizer.json" in out and "FIFO" in out, out


# --- sizes read from files are bounded before anything is allocated ---------------------------------
@pytest.mark.parametrize("field, value", [("num_hidden_layers", 10 ** 9), ("inner_group_num", 10 ** 8)])
def test_plan_length_from_config_json_is_bounded(field, value, tmp_path):
    folder = saved_folder(tmp_path)
    edit_config(folder, **{field: value})
    out = bounded("from minishare.models import AlbertForPreTraining\n"
                  + outcome_of(f"AlbertForPreTraining.from_pretrained({str(folder)!r})"))
    assert out.startswith("HubError:"), out
    assert "config.json" in out and field in out and "at most" in out, out


def checkpoint_with_config(tmp_path, field, value):
    """A saved checkpoint whose metadata says ``config[field] = value`` (an edited file)."""
    path = str(tmp_path / "ckpt.npz")
    checkpoint.save(AlbertForPreTraining(AlbertConfig(**TINY)), path)
    with np.load(path) as npz:
        files = {key: npz[key] for key in npz.files}
    meta = json.loads(files["__meta__"].tobytes().decode())
    meta["config"][field] = value
    files["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez(path, **files)
    return path


def test_plan_length_from_checkpoint_metadata_is_bounded(tmp_path):
    path = checkpoint_with_config(tmp_path, "num_hidden_layers", 10 ** 9)
    out = bounded("from minishare import checkpoint\n" + outcome_of(f"checkpoint.load({path!r})"))
    assert out.startswith("CheckpointError:") and path in out and "num_hidden_layers" in out \
        and "at most" in out, out


def test_sharing_plan_states_its_ceiling():
    from minishare import sharing
    out = bounded("from minishare import sharing\n"
                  + outcome_of("sharing.Plan.build('cycle', 10 ** 9, 2)"))
    assert out.startswith("InvalidValue:") and f"at most {sharing.MAX_LAYERS:,}" in out, out


def _npz_with_header(path, name, shape, payload_bytes):
    """A checkpoint whose entry ``name`` declares ``shape`` (float32) but stores ``payload_bytes``."""
    model = AlbertForPreTraining(AlbertConfig(**TINY))
    checkpoint.save(model, path)
    with np.load(path) as npz:
        files = {key: npz[key] for key in npz.files}
    with zipfile.ZipFile(path, "w") as z:
        for key, array in files.items():
            if key == name:
                continue
            with z.open(f"{key}.npy", "w") as f:
                np.lib.format.write_array(f, array, allow_pickle=False)
        with z.open(f"{name}.npy", "w") as f:
            np.lib.format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False, "shape": shape})
            f.write(bytes(payload_bytes))


@pytest.mark.parametrize("shape", [(10 ** 6, 10 ** 6), (6 * 10 ** 8,)])
def test_npz_entry_declaring_more_than_it_holds_is_refused_before_allocating(shape, tmp_path):
    path = str(tmp_path / "ckpt.npz")
    _npz_with_header(path, "param/albert.pooler.bias", shape, 64)
    out = bounded("from minishare import checkpoint\n" + outcome_of(f"checkpoint.load({path!r})"))
    assert out.startswith("CheckpointError:") and path in out and "albert.pooler.bias" in out, out
    assert "declares" in out, out


def test_ids_file_with_one_very_long_line_is_refused_before_allocating(tmp_path):
    path = tmp_path / "ids.txt"
    path.write_text("1 2 3\n" * 2000 + " ".join(["7"] * 10 ** 6) + "\n")
    out = bounded("from minishare.analysis import layerwise\n"
                  + outcome_of(f"layerwise.load_input_ids({str(path)!r}, 50, 20)"))
    assert out.startswith("InvalidValue:") and "ids.txt" in out and "max_position_embeddings" in out, out


def test_ids_file_with_a_30_digit_id_names_the_line(tmp_path):
    from minishare.analysis import layerwise
    path = tmp_path / "ids.txt"
    path.write_text("1 2 3\n4 " + "9" * 30 + "\n")
    with pytest.raises(ValueError) as info:
        layerwise.load_input_ids(path, 50, 20)
    assert "ids.txt" in str(info.value) and "line 2" in str(info.value) and "C long" not in str(info.value)


def test_npy_ids_that_are_really_an_npz_are_refused(tmp_path):
    from minishare.analysis import layerwise
    path = tmp_path / "ids.npy"
    with open(path, "wb") as f:
        np.savez(f, ids=np.zeros((2, 3), np.int64))
    with pytest.raises(ValueError, match=r"ids\.npy.*not an \.npy"):
        layerwise.load_input_ids(path, 50, 20)


# --- JSON: depth, size and digits bounded, the file named -------------------------------------------
def _deep(depth):
    return "[" * depth + "]" * depth


def test_deeply_nested_config_json_is_refused_naming_the_file(tmp_path):
    folder = saved_folder(tmp_path)
    text = (folder / "config.json").read_text()
    (folder / "config.json").write_text(text.rstrip()[:-1] + ', "x": ' + _deep(100_000) + "}")
    with pytest.raises(HubError, match=r"config\.json.*nested deeper than"):
        AlbertForPreTraining.from_pretrained(folder)


def test_deeply_nested_tokenizer_json_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text('{"format": "minishare-bpe", "version": 1, "vocab": ' + _deep(100_000) + "}")
    with pytest.raises(ValueError, match=r"tokenizer\.json.*nested deeper than"):
        data.Tokenizer.load(path)


def test_deeply_nested_checkpoint_metadata_is_refused_naming_the_file(tmp_path):
    path = str(tmp_path / "ckpt.npz")
    checkpoint.save(AlbertForPreTraining(AlbertConfig(**TINY)), path)
    with np.load(path) as npz:
        files = {key: npz[key] for key in npz.files}
    meta = files["__meta__"].tobytes().decode()
    files["__meta__"] = np.frombuffer((meta[:-1] + ', "x": ' + _deep(100_000) + "}").encode(), dtype=np.uint8)
    np.savez(path, **files)
    with pytest.raises(CheckpointError, match="nested deeper than") as info:
        checkpoint.load(path)
    assert path in str(info.value)


def test_huge_integer_in_json_is_refused_naming_the_file(tmp_path):
    folder = saved_folder(tmp_path)
    text = (folder / "config.json").read_text()
    (folder / "config.json").write_text(text.rstrip()[:-1] + ', "x": ' + "9" * 100_001 + "}")
    with pytest.raises(HubError) as info:
        AlbertForPreTraining.from_pretrained(folder)
    message = str(info.value)
    assert "config.json" in message and "digits" in message and "sys.set_int_max_str_digits" not in message


def test_json_file_over_its_size_ceiling_is_refused_before_reading(tmp_path):
    from minishare import safeio
    folder = saved_folder(tmp_path)
    with open(folder / "config.json", "r+b") as f:   # sparse: no disk used, no time spent
        f.truncate(safeio.MAX_JSON_BYTES + 1)
    with pytest.raises(HubError, match=r"config\.json.*bytes, more than"):
        AlbertForPreTraining.from_pretrained(folder)


# --- every field type-checked, named with the file and the range ------------------------------------
@pytest.mark.parametrize("field, value, words", [
    ("hidden_act", ["gelu"], ["hidden_act", "known: gelu"]),
    ("hidden_dropout_prob", "0.1", ["hidden_dropout_prob", "[0, 1)"]),
    ("hidden_size", 10 ** 12, ["hidden_size", "at most"]),
    ("layer_norm_eps", float("inf"), ["layer_norm_eps", "finite"]),
])
def test_config_json_fields_name_field_file_and_range(field, value, words, tmp_path):
    folder = saved_folder(tmp_path)
    edit_config(folder, **{field: value})
    out = bounded("from minishare.models import AlbertForPreTraining\n"
                  + outcome_of(f"AlbertForPreTraining.from_pretrained({str(folder)!r})"))
    assert out.startswith("HubError:") and "config.json" in out, out
    for word in words:
        assert word in out, (word, out)


def test_layer_norm_eps_must_be_finite_in_checkpoint_metadata(tmp_path):
    path = checkpoint_with_config(tmp_path, "layer_norm_eps", float("inf"))
    with pytest.raises(CheckpointError, match="layer_norm_eps.*finite"):
        checkpoint.load(path)


# --- weights: no silent wrong load -------------------------------------------------------------------
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_weights_are_refused_naming_the_tensor(bad, tmp_path):
    folder = saved_folder(tmp_path)
    tensors = load_st(folder / "model.safetensors")
    tensors["albert.pooler.bias"][3] = bad
    save_st(folder / "model.safetensors", tensors)
    with pytest.raises(HubError, match=r"albert\.pooler\.bias.*not finite"):
        AlbertForPreTraining.from_pretrained(folder)


def test_non_finite_weights_in_a_checkpoint_are_refused_naming_the_tensor(tmp_path):
    path = str(tmp_path / "ckpt.npz")
    model = AlbertForPreTraining(AlbertConfig(**TINY))
    model.albert.pooler.bias.data[2] = np.nan
    checkpoint.save(model, path)
    with pytest.raises(CheckpointError, match=r"albert\.pooler\.bias.*not finite"):
        checkpoint.load(path)


def test_integer_dtype_is_refused_by_from_pretrained(tmp_path):
    folder = saved_folder(tmp_path)
    with pytest.raises((HubError, TypeError), match="dtype"):
        AlbertForPreTraining.from_pretrained(folder, dtype=np.int32)


def _sharded(tmp_path, shard_of):
    """The folder with its weights split into shards: ``shard_of(name)`` -> [file names]."""
    folder = saved_folder(tmp_path)
    tensors = load_st(folder / "model.safetensors")
    os.remove(folder / "model.safetensors")
    files = {}
    for name, array in tensors.items():
        for file in shard_of(name):
            files.setdefault(file, {})[name] = array
    weight_map = {}
    for file, part in files.items():
        path = file if os.path.isabs(file) else folder / file
        save_st(path, part)
        weight_map.update(dict.fromkeys(part, file))
    (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    return folder


@pytest.mark.parametrize("absolute", [True, False])
def test_index_shard_outside_the_folder_is_refused(absolute, tmp_path):
    outside = str(tmp_path / "elsewhere.safetensors") if absolute else "../elsewhere.safetensors"
    folder = _sharded(tmp_path, lambda name: [outside if "pooler" in name else "a.safetensors"])
    with pytest.raises(HubError, match="outside"):
        AlbertForPreTraining.from_pretrained(folder)


def test_tensor_in_two_shards_is_refused(tmp_path):
    folder = _sharded(tmp_path, lambda name: ["a.safetensors", "b.safetensors"] if "pooler.bias" in name
                      else ["a.safetensors"])
    with pytest.raises(HubError, match=r"albert\.pooler\.bias.*a\.safetensors.*b\.safetensors"):
        AlbertForPreTraining.from_pretrained(folder)


def test_layer_norm_with_both_gamma_and_weight_is_refused(tmp_path):
    folder = saved_folder(tmp_path)
    tensors = load_st(folder / "model.safetensors")
    name = "albert.embeddings.LayerNorm.weight"
    tensors[name.replace("weight", "gamma")] = tensors[name] * 2
    save_st(folder / "model.safetensors", tensors)
    with pytest.raises(HubError, match=r"LayerNorm\.gamma.*LayerNorm\.weight"):
        AlbertForPreTraining.from_pretrained(folder)


def test_float64_values_that_overflow_float32_are_refused(tmp_path):
    folder = saved_folder(tmp_path)
    tensors = load_st(folder / "model.safetensors")
    big = tensors["albert.pooler.bias"].astype(np.float64)
    big[0] = 1e300
    tensors["albert.pooler.bias"] = big                 # one F64 tensor among F32: loads as float32
    save_st(folder / "model.safetensors", tensors)
    with pytest.raises(HubError, match=r"albert\.pooler\.bias.*float32"):
        AlbertForPreTraining.from_pretrained(folder)


# --- tokenizer files and ids ------------------------------------------------------------------------
def _tokenizer():
    return data.Tokenizer.train(["the cat sat on the mat"], vocab_size=30)


def test_tokenizer_version_is_checked(tmp_path):
    path = tmp_path / "tok.json"
    _tokenizer().save(path)
    state = json.loads(path.read_text())
    state["version"] = 99
    path.write_text(json.dumps(state))
    with pytest.raises(ValueError, match=r"tok\.json.*version 99"):
        data.Tokenizer.load(path)


@pytest.mark.parametrize("ids", [[5.7], [np.float64(5.0)], ["5"]])
def test_decode_refuses_ids_that_are_not_integers(ids):
    with pytest.raises(TypeError, match="integer"):
        _tokenizer().decode(ids)


def test_bpe_training_caps_the_length_of_a_word(monkeypatch):
    """One unbroken 20,000-character hex blob: every piece BPE merges inside is at most the cap
    long, so the work per merge no longer grows with the blob's length."""
    from minishare.data import tokenizer as tok
    rng = np.random.default_rng(0)
    blob = "".join(rng.choice(list("0123456789abcdef"), 20_000))
    assert all(len(piece) <= tok.MAX_PIECE_CHARS for piece in tok.pretokenize(" " + blob))
    lengths = []
    real_merge = tok._merge

    def spy(symbols, a, b, merged):
        lengths.append(len(symbols))
        return real_merge(symbols, a, b, merged)
    monkeypatch.setattr(tok, "_merge", spy)
    trained = tok.Tokenizer.train(["Some words " + blob], vocab_size=120)
    assert lengths and max(lengths) <= tok.MAX_PIECE_CHARS
    assert trained.decode(trained.encode(" " + blob)) == " " + blob     # still lossless


def test_bpe_training_shows_progress_when_asked(capsys):
    pytest.importorskip("tqdm")
    data.Tokenizer.train(["the cat sat on the mat " * 5], vocab_size=30, progress=True)
    assert "merges" in capsys.readouterr().err


# --- a corpus of one long line -------------------------------------------------------------------------
def test_one_line_corpus_is_read_and_counted_in_a_few_times_its_size(tmp_path):
    """4 MB of words on one line (no blank line, so one document): reading it and counting its
    BPE pieces allocates a few times the file (Python's peak as tracemalloc sees it), where a
    list of every word once cost about 20 times."""
    import tracemalloc
    rng = np.random.default_rng(0)
    words = np.array([f"w{i}" for i in range(300)] + ["The", "end."])
    path = tmp_path / "one_line.txt"
    path.write_text(" ".join(rng.choice(words, 800_000)) + "\n")
    size = path.stat().st_size
    tracemalloc.start()
    try:
        build.load_tokenizer(data.load_text(str(path)), vocab_size=330)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 6 * size, (peak, size)
