"""Hugging Face folders whose tensor names were edited (issue 34): a prefix is matched as text,
never cut by its length, a name of no known layout is refused naming it, and a refusal names the
first few tensors and how many more, however many the file holds. These run without the
safetensors package: the file's header (its names, dtypes and shapes) is given directly."""
import json

import pytest

from minishare.models import AlbertConfig, AlbertForPreTraining, AlbertModel
from minishare.models.hub import HubError, io
from minishare.models.hub.config_json import hf_config
from minishare.models.hub.names import match_prefix, name_map

CONFIG = AlbertConfig(vocab_size=30, embedding_size=8, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=32, max_position_embeddings=16)


def header():
    """{Hugging Face name: (file, dtype, shape)} as a folder saved from ``CONFIG`` holds them."""
    names, _ = name_map(CONFIG, "albert", heads=True)
    shapes = {name: tuple(p.shape) for name, p in AlbertForPreTraining(CONFIG).named_parameters()}
    return {hf: ("model.safetensors", "F32", shapes[ms] if ms else (16, 16)) for hf, ms in names.items()}


def folder_with(tmp_path, monkeypatch, entries):
    (tmp_path / "config.json").write_text(json.dumps(hf_config(CONFIG, "albert")))
    monkeypatch.setattr(io, "_entries", lambda directory: dict(entries))
    return tmp_path


def test_a_prefix_of_the_same_length_is_not_taken_for_albert(tmp_path):
    entries = header()
    word = "albert.embeddings.word_embeddings.weight"
    entries["zzzzzzzembeddings.word_embeddings.weight"] = entries.pop(word)     # as long as "albert."
    names, _ = name_map(CONFIG, "albert", heads=False)
    with pytest.raises(HubError) as info:
        match_prefix(entries, names, "albert", False, str(tmp_path))
    message = str(info.value)
    assert "zzzzzzzembeddings.word_embeddings.weight" in message and "no known layout" in message, message


def test_the_encoder_of_a_folder_with_heads_is_still_read_by_prefix(tmp_path):
    names, _ = name_map(CONFIG, "albert", heads=False)
    renamed = match_prefix(header(), names, "albert", False, str(tmp_path))
    assert set(renamed) == set(names)


def test_a_refusal_names_the_first_few_tensors_and_the_count(tmp_path, monkeypatch):
    entries = header()
    entries.update({f"albert.extra.{i}.weight": ("model.safetensors", "F32", (2,)) for i in range(50_000)})
    folder = folder_with(tmp_path, monkeypatch, entries)
    with pytest.raises(HubError) as info:
        AlbertForPreTraining.from_pretrained(folder)
    message = str(info.value)
    assert "unexpected albert.extra.0.weight" in message and "and 49,997 more" in message
    assert len(message) < 600, len(message)


def test_a_base_model_folder_with_edited_names_is_refused_naming_them(tmp_path, monkeypatch):
    entries = {name.removeprefix("albert."): e for name, e in header().items() if name.startswith("albert.")}
    entries["zzzzzzzpooler.weight"] = entries.pop("pooler.weight")
    folder = folder_with(tmp_path, monkeypatch, entries)
    with pytest.raises(HubError, match="missing pooler.weight.*unexpected zzzzzzzpooler.weight"):
        AlbertModel.from_pretrained(folder)
