"""Checkpoints (``minishare.checkpoint``): a saved model comes back with equal weights, an equal
configuration and the same sharing (one Parameter object where the model had one); the file stores
each shared tensor once and never needs pickle; writes are atomic; damaged or edited files are
refused with an error that names the file.

Expectations are written out here: parameter counts by hand from the layer sizes, which positions
share as letters from the paper (Cycle (rev), M = 2, N = 4: "ABBA"), and the file layout read back
with NumPy itself, never through ``checkpoint.load``.
"""
import io
import json
import os

import numpy as np
import pytest

import minishare
from minishare import backend, checkpoint
from minishare.checkpoint import CheckpointError
from minishare.models import (AlbertConfig, AlbertForPreTraining, DecoderLM, EncoderDecoderModel,
                              TransformerConfig)


# --- helpers --------------------------------------------------------------------------------------
def host(x):
    return x.numpy() if isinstance(x, minishare.Tensor) else backend.to_numpy(x)


def albert(sharing="all-shared", N=4, M=None):
    return AlbertForPreTraining(AlbertConfig(
        vocab_size=23, embedding_size=8, hidden_size=16, num_hidden_layers=N, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=16, sharing=sharing, num_unique_layers=M))


def encoder_decoder():
    return EncoderDecoderModel(TransformerConfig(
        vocab_size=19, embedding_size=8, hidden_size=16, num_hidden_layers=4, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=16, sharing="cycle-rev", num_unique_layers=2))


def decoder_lm():
    return DecoderLM(TransformerConfig(
        vocab_size=19, hidden_size=16, num_hidden_layers=3, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=16, sharing="universal"))


# Distinct parameters, counted by hand (a Linear is weight + bias, a LayerNorm weight + bias):
#   ALBERT embeddings: word, position, token type, LayerNorm (2), E -> H projection (2)   = 7
#   attention set: query, key, value, dense (8) + its LayerNorm (2)                      = 10
#   FFN set: two Linears (4) + its LayerNorm (2)                                          = 6
#   pooler 2, MLM head: dense 2, LayerNorm 2, decoder bias 1 (weight tied), SOP head 2   = 9
# Encoder-decoder (E = 8 < H = 16, pre-norm): word embeddings 1 + projection 2; encoder 2 attention
# + 2 FFN sets + final norm 2 = 34; decoder 2 self- + 2 cross-attention + 2 FFN sets + final norm
# = 54; output: H -> E dense without bias 1, V x E matrix tied = 92. Decoder-only LM (E = H, one
# set): word embeddings 1 + attention 10 + FFN 6 + final norm 2 = 19.
CASES = {
    "albert all-shared": (lambda: albert("all-shared"), 7 + 10 + 6 + 9,
                          {"predictions.decoder.weight": "albert.embeddings.word_embeddings.weight"}),
    "albert cycle-rev M=2 N=4": (lambda: albert("cycle-rev", N=4, M=2), 7 + 2 * (10 + 6) + 9,
                                 {"predictions.decoder.weight": "albert.embeddings.word_embeddings.weight"}),
    "encoder-decoder cycle-rev": (encoder_decoder, 92,
                                  {"lm_head.decoder.weight": "embeddings.word_embeddings.weight"}),
    "decoder-only universal": (decoder_lm, 19,
                               {"lm_head.decoder.weight": "embeddings.word_embeddings.weight"}),
}


def perturb(model, seed=7):
    """Give every distinct parameter fresh random values (in place, identities kept), so a load
    that forgot to fill a tensor cannot pass by matching a fresh initialization."""
    rng = np.random.default_rng(seed)
    for p in model.parameters():
        p.data = backend.asarray(rng.standard_normal(p.shape).astype(host(p).dtype))
    return model


def identity_partition(model):
    """The sharing of a model as a set of frozensets of names (one per distinct tensor)."""
    groups = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        groups.setdefault(id(p), []).append(name)
    return {frozenset(names) for names in groups.values()}


def read_npz(path):
    with np.load(path, allow_pickle=False) as npz:
        return {key: npz[key] for key in npz.files}


def read_meta(files):
    return json.loads(files["__meta__"].tobytes().decode())


def write_npz(path, files):
    with open(path, "wb") as f:
        np.savez(f, **files)


def set_meta(files, meta):
    files["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)


def at(stack, component, position):
    """The module that serves ``position`` of a stack for ``component``."""
    return getattr(stack, f"{component}_sets")[stack.plan.index(component, position)]


def assert_positions_share(stack, component, letters):
    """Positions i and j use one module exactly when the paper's letters agree."""
    for i in range(len(letters)):
        for j in range(len(letters)):
            same = at(stack, component, i) is at(stack, component, j)
            assert same == (letters[i] == letters[j]), (component, i, j, letters)


# --- round trip -----------------------------------------------------------------------------------
@pytest.mark.parametrize("case", list(CASES))
def test_round_trip_keeps_values_configuration_and_sharing(case, tmp_path):
    make, n_distinct, aliases = CASES[case]
    minishare.manual_seed(0)
    model = perturb(make())
    path = str(tmp_path / "model.npz")
    assert checkpoint.save(model, path) == path

    minishare.manual_seed(99)                       # a different fresh initialization underneath
    loaded = checkpoint.load(path)
    assert type(loaded) is type(model)
    assert loaded.config == model.config and type(loaded.config) is type(model.config)
    original, restored = model.state_dict(), loaded.state_dict()
    assert list(restored) == list(original)
    for name in original:
        assert host(restored[name]).dtype == host(original[name]).dtype, name
        assert np.array_equal(host(restored[name]), host(original[name])), name
    assert len(list(loaded.parameters())) == len(list(model.parameters())) == n_distinct
    assert identity_partition(loaded) == identity_partition(model)
    for alias, target in aliases.items():
        assert dict(loaded.named_parameters(remove_duplicate=False))[alias] is \
            dict(loaded.named_parameters())[target]


def test_tied_mlm_decoder_is_the_word_embedding_after_load(tmp_path):
    path = str(tmp_path / "albert.npz")
    checkpoint.save(perturb(albert("cycle-rev", N=4, M=2)), path)
    loaded = checkpoint.load(path)
    assert loaded.predictions.decoder.weight is loaded.albert.embeddings.word_embeddings.weight
    # one tensor: a write through one name is seen through the other
    loaded.albert.embeddings.word_embeddings.weight.data[0, 0] = 123.0
    assert float(host(loaded.predictions.decoder.weight)[0, 0]) == 123.0


@pytest.mark.parametrize("sharing, N, M, letters", [("all-shared", 4, None, "AAAA"),
                                                    ("cycle-rev", 4, 2, "ABBA")])
def test_shared_positions_are_one_module_after_load(sharing, N, M, letters, tmp_path):
    path = str(tmp_path / "albert.npz")
    checkpoint.save(perturb(albert(sharing, N=N, M=M)), path)
    stack = checkpoint.load(path).albert.encoder
    for component in ("attention", "ffn"):
        assert_positions_share(stack, component, letters)


def test_encoder_decoder_positions_share_after_load(tmp_path):
    path = str(tmp_path / "seq2seq.npz")
    checkpoint.save(perturb(encoder_decoder()), path)
    loaded = checkpoint.load(path)
    for component in ("attention", "ffn"):
        assert_positions_share(loaded.encoder, component, "ABBA")
    for component in ("attention", "cross_attention", "ffn"):
        assert_positions_share(loaded.decoder, component, "ABBA")
    assert loaded.lm_head.decoder.weight is loaded.embeddings.word_embeddings.weight


def test_loaded_model_computes_what_the_saved_one_did(tmp_path):
    minishare.manual_seed(0)
    model = perturb(albert("cycle-rev", N=4, M=2)).eval()
    ids = minishare.tensor(np.random.default_rng(3).integers(5, 23, size=(2, 7)))
    before = host(model(ids).prediction_logits)
    path = str(tmp_path / "albert.npz")
    checkpoint.save(model, path)
    after = host(checkpoint.load(path).eval()(ids).prediction_logits)
    assert np.array_equal(after, before)


@pytest.mark.parametrize("case", list(CASES))
def test_file_stores_each_shared_tensor_once_without_pickle(case, tmp_path):
    make, n_distinct, aliases = CASES[case]
    model = make()
    path = str(tmp_path / "model.npz")
    checkpoint.save(model, path)
    files = read_npz(path)                       # raises if anything in it needed pickle
    params = [key for key in files if key.startswith("param/")]
    assert len(params) == n_distinct
    assert len(params) < len(model.state_dict())     # the tied name is not stored twice
    for alias in aliases:
        assert f"param/{alias}" not in files
    meta = read_meta(files)
    assert meta["aliases"] == aliases
    assert meta["model_class"] == type(model).__name__
    assert meta["config"] == model.config.to_dict()
    for key in params:
        assert np.array_equal(files[key], host(dict(model.named_parameters())[key[len("param/"):]]))


def test_float64_weights_come_back_as_float64(tmp_path):
    """A model trained in float64 (as the gradient checks use) keeps its precision."""
    model = perturb(decoder_lm().double())
    path = str(tmp_path / "lm.npz")
    checkpoint.save(model, path)
    loaded = checkpoint.load(path)
    for name, p in model.state_dict().items():
        q = loaded.state_dict()[name]
        assert host(q).dtype == np.float64, name
        assert np.array_equal(host(q), host(p)), name


# --- training state -------------------------------------------------------------------------------
def test_training_state_round_trips_with_types_kept(tmp_path):
    state = {"step": 7, "elapsed": 1.25, "name": "adamw", "none": None, "flag": True,
             "groups": [{"lr": 0.5, "params": [0, 1]}],
             "pair": (0.9, 0.999),
             "state": {0: {"exp_avg": np.arange(6, dtype=np.float32).reshape(2, 3)},
                       1: {"exp_avg": np.array([1.5, -2.0])}},
             "big": 2 ** 100}                     # random generators' states hold 128-bit ints
    path = str(tmp_path / "c.npz")
    checkpoint.save(decoder_lm(), path, state)
    _, back = checkpoint.load(path, with_training_state=True)
    assert set(back) == set(state)
    for key in ("step", "elapsed", "name", "none", "flag", "groups", "big"):
        assert back[key] == state[key] and type(back[key]) is type(state[key]), key
    assert back["pair"] == (0.9, 0.999) and isinstance(back["pair"], tuple)
    assert set(back["state"]) == {0, 1}                     # int keys stay ints
    first = host(back["state"][0]["exp_avg"])
    assert first.dtype == np.float32 and np.array_equal(first, state["state"][0]["exp_avg"])
    assert np.array_equal(host(back["state"][1]["exp_avg"]), [1.5, -2.0])


def test_asking_for_training_state_that_was_not_saved_is_refused(tmp_path):
    path = str(tmp_path / "c.npz")
    checkpoint.save(decoder_lm(), path)
    with pytest.raises(CheckpointError, match="training state") as err:
        checkpoint.load(path, with_training_state=True)
    assert path in str(err.value)


def test_unstorable_training_state_is_refused_before_writing(tmp_path):
    path = tmp_path / "c.npz"
    with pytest.raises(TypeError, match="set"):
        checkpoint.save(decoder_lm(), str(path), {"oops": {1, 2}})
    assert os.listdir(tmp_path) == []


def test_saving_something_that_is_not_a_model_is_refused(tmp_path):
    from minishare.nn import Linear
    with pytest.raises(TypeError, match="Linear"):
        checkpoint.save(Linear(2, 3), str(tmp_path / "c.npz"))


# --- atomic writes --------------------------------------------------------------------------------
def test_save_leaves_only_the_checkpoint_in_the_folder(tmp_path):
    path = tmp_path / "c.npz"
    checkpoint.save(albert(), str(path))
    checkpoint.save(albert(), str(path))            # overwriting too
    assert os.listdir(tmp_path) == ["c.npz"]


def test_save_creates_missing_folders(tmp_path):
    path = tmp_path / "a" / "b" / "c.npz"
    checkpoint.save(decoder_lm(), str(path))
    assert os.listdir(tmp_path / "a" / "b") == ["c.npz"]


@pytest.mark.parametrize("error", [OSError("No space left on device"), KeyboardInterrupt()])
def test_failed_write_keeps_the_previous_checkpoint(error, tmp_path, monkeypatch):
    path = str(tmp_path / "c.npz")
    minishare.manual_seed(0)
    previous = perturb(albert(), seed=1)
    checkpoint.save(previous, path)
    with open(path, "rb") as f:
        good_bytes = f.read()

    def half_written_savez(file, *args, **kwargs):
        file.write(b"PK\x03\x04 half a zip")       # some bytes reach the disk, then it fails
        raise error

    monkeypatch.setattr(np, "savez", half_written_savez)
    with pytest.raises(type(error)):
        checkpoint.save(perturb(albert(), seed=2), path)
    monkeypatch.undo()

    assert os.listdir(tmp_path) == ["c.npz"]        # no temporary file left behind
    with open(path, "rb") as f:
        assert f.read() == good_bytes
    restored = checkpoint.load(path)
    for name, value in previous.state_dict().items():
        assert np.array_equal(host(restored.state_dict()[name]), host(value))


def test_failed_first_write_leaves_nothing(tmp_path, monkeypatch):
    def failing_savez(file, *args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", failing_savez)
    with pytest.raises(OSError, match="disk full"):
        checkpoint.save(albert(), str(tmp_path / "c.npz"))
    assert os.listdir(tmp_path) == []


# --- refusals -------------------------------------------------------------------------------------
@pytest.fixture
def saved(tmp_path):
    """A valid checkpoint of a small ALBERT (tied MLM decoder) and its path."""
    path = str(tmp_path / "ckpt.npz")
    model = perturb(albert("cycle-rev", N=4, M=2))
    checkpoint.save(model, path, {"step": 3})
    return path


def refused(path, match=None, error=CheckpointError):
    with pytest.raises(error, match=match) as info:
        checkpoint.load(path)
    assert str(path) in str(info.value), "the message must name the file"
    return str(info.value)


def test_missing_file(tmp_path):
    refused(str(tmp_path / "nowhere.npz"), error=FileNotFoundError)


def test_truncated_file(saved):
    with open(saved, "rb") as f:
        raw = f.read()
    with open(saved, "wb") as f:
        f.write(raw[: len(raw) // 2])
    refused(saved)


def test_random_bytes(tmp_path):
    path = str(tmp_path / "garbage.npz")
    with open(path, "wb") as f:
        f.write(np.random.default_rng(0).integers(0, 256, 5000, dtype=np.uint8).tobytes())
    refused(path)


def test_empty_file(tmp_path):
    path = str(tmp_path / "empty.npz")
    open(path, "wb").close()
    refused(path)


def test_valid_npz_that_is_not_a_checkpoint(tmp_path):
    path = str(tmp_path / "other.npz")
    write_npz(path, {"weights": np.zeros(3)})
    refused(path, match="not a minishare checkpoint")


def test_npz_that_would_need_pickle_is_refused(tmp_path):
    """Loading must never unpickle: an object array is refused, not executed."""
    path = str(tmp_path / "pickled.npz")
    write_npz(path, {"__meta__": np.array([{"format": "minishare-checkpoint"}], dtype=object)})
    refused(path)


def test_wrong_format_version(saved):
    files = read_npz(saved)
    meta = read_meta(files)
    meta["version"] = 999
    set_meta(files, meta)
    write_npz(saved, files)
    refused(saved, match="version")


def test_array_of_the_wrong_shape(saved):
    files = read_npz(saved)
    key = "param/albert.pooler.weight"
    files[key] = np.zeros((files[key].shape[0], files[key].shape[1] + 1), dtype=files[key].dtype)
    write_npz(saved, files)
    message = refused(saved, match="shape")
    assert "albert.pooler.weight" in message


def test_missing_parameter_entry(saved):
    files = read_npz(saved)
    del files["param/sop_classifier.bias"]
    write_npz(saved, files)
    assert "sop_classifier.bias" in refused(saved)


@pytest.mark.parametrize("edit", ["drop the tie", "invent a tie", "retarget the tie"])
def test_edited_aliases(edit, saved):
    files = read_npz(saved)
    meta = read_meta(files)
    if edit == "drop the tie":
        meta["aliases"] = {}
    elif edit == "invent a tie":
        meta["aliases"]["sop_classifier.bias"] = "albert.pooler.bias"
    else:
        meta["aliases"]["predictions.decoder.weight"] = "albert.pooler.weight"
    set_meta(files, meta)
    write_npz(saved, files)
    refused(saved, match="shar")


def test_configuration_edited_to_other_sharing(saved):
    """Weights of a Cycle (rev) model under an all-shared configuration: the sets do not fit."""
    files = read_npz(saved)
    meta = read_meta(files)
    meta["config"].update(sharing="all-shared", num_unique_layers=None)
    set_meta(files, meta)
    write_npz(saved, files)
    refused(saved)


def test_configuration_edited_to_untie(saved):
    files = read_npz(saved)
    meta = read_meta(files)
    meta["config"]["tie_word_embeddings"] = False
    set_meta(files, meta)
    write_npz(saved, files)
    refused(saved)


def test_impossible_configuration(saved):
    files = read_npz(saved)
    meta = read_meta(files)
    meta["config"]["hidden_size"] = -16
    set_meta(files, meta)
    write_npz(saved, files)
    refused(saved, match="hidden_size")


@pytest.mark.parametrize("field, value", [("model_class", "os.system"), ("config_class", "PRESETS"),
                                          ("config_class", "NoSuchConfig")])
def test_unknown_classes(field, value, saved):
    files = read_npz(saved)
    meta = read_meta(files)
    meta[field] = value
    set_meta(files, meta)
    write_npz(saved, files)
    refused(saved)


@pytest.mark.parametrize("key", ["config", "aliases", "model_class"])
def test_metadata_missing_a_field(key, saved):
    files = read_npz(saved)
    meta = read_meta(files)
    del meta[key]
    set_meta(files, meta)
    write_npz(saved, files)
    refused(saved)


def test_metadata_that_is_not_json(saved):
    files = read_npz(saved)
    files["__meta__"] = np.frombuffer(b"\xff\xfe not json", dtype=np.uint8)
    write_npz(saved, files)
    refused(saved, match="metadata")


def test_refused_file_is_left_untouched(saved):
    files = read_npz(saved)
    files["param/albert.pooler.bias"] = np.zeros(3, dtype=np.float32)
    write_npz(saved, files)
    with open(saved, "rb") as f:
        before = f.read()
    refused(saved)
    with open(saved, "rb") as f:
        assert f.read() == before
    assert len(read_npz(io.BytesIO(before))) == len(files)
