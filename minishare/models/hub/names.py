"""Hugging Face's tensor names and minishare's: which name holds which tensor.

What maps to what (each distinct minishare tensor is written once, under the name of its group)::

    minishare (AlbertForPreTraining)        Hugging Face AlbertForPreTraining (set s = group g, K = 1)
    albert.embeddings.*                     albert.embeddings.*
    albert.embeddings.                      albert.encoder.embedding_hidden_mapping_in
        embedding_hidden_mapping_in
    encoder.attention_sets.{s}.sublayer.q   albert.encoder.albert_layer_groups.{g}.albert_layers.0.
        /k/v/dense, .LayerNorm                  attention.{query,key,value,dense,LayerNorm}
    encoder.ffn_sets.{s}.sublayer.ffn,      ....albert_layers.0.ffn, .ffn_output,
        .ffn_output, .LayerNorm                 .full_layer_layer_norm
    albert.pooler                           albert.pooler
    predictions.dense, .LayerNorm           predictions.dense, .LayerNorm
    predictions.decoder.bias                predictions.bias (Hugging Face ties decoder.bias to it)
    predictions.decoder.weight              (tied: the word embeddings, not written)
    sop_classifier                          sop_classifier.classifier

    minishare, E = H, not shared            Hugging Face BertForPreTraining
    albert.embeddings.*                     bert.embeddings.*
    attention_sets.{i}: query/key/value,    bert.encoder.layer.{i}.attention.self.{query,key,value},
        dense, LayerNorm                        attention.output.dense, attention.output.LayerNorm
    ffn_sets.{i}: ffn, ffn_output,          bert.encoder.layer.{i}.intermediate.dense, output.dense,
        LayerNorm                               output.LayerNorm
    albert.pooler                           bert.pooler.dense
    predictions.dense, .LayerNorm           cls.predictions.transform.dense, .LayerNorm
    predictions.decoder.bias                cls.predictions.bias
    sop_classifier                          cls.seq_relationship

The E -> H projection. Hugging Face's ALBERT always has ``embedding_hidden_mapping_in``, even when
E = H; minishare, like Google's reference code, has none when E = H unless
``AlbertConfig.embedding_projection`` is True. An ALBERT folder with E = H therefore loads with
``embedding_projection=True`` and keeps its trained projection; a minishare ALBERT with E = H and
no projection is saved with an identity projection (weight I, bias 0): exactly the same function.

Names a file may spell otherwise: the buffers ``position_ids`` and ``token_type_ids`` that older
checkpoints carry are skipped (they are ``arange(P)`` and zeros, which the model builds itself), and
LayerNorm parameters named ``gamma`` and ``beta`` (checkpoints converted from TensorFlow) are read
as ``weight`` and ``bias``, as transformers does.
"""
from minishare.models.hub.layout import HubError, albert_groups

_BUFFERS = ("embeddings.position_ids", "embeddings.token_type_ids")   # arange(P) and zeros
HEADS = ("predictions.", "sop_classifier.", "cls.")                  # the pre-training heads' names


def _pair(hf, ms, bias=True):
    return {f"{hf}.weight": f"{ms}.weight", **({f"{hf}.bias": f"{ms}.bias"} if bias else {})}


def name_map(config, model_type, heads=True):
    """({Hugging Face name: minishare name}, {optional Hugging Face name: the name it must equal}).
    The optional names are the tied copies some files carry (the decoder's weight and bias). With
    ``heads`` False the names are those of the base model (``AlbertModel``, ``BertModel``): no
    heads and no "albert."/"bert." prefix. Without the E -> H projection in an ALBERT layout, the
    projection's names map to None (``save_pretrained`` writes the identity)."""
    top, emb = ("albert", "albert.embeddings") if model_type == "albert" else ("bert", "bert.embeddings")
    names = {f"{emb}.{part}.weight": f"albert.embeddings.{part}.weight"
             for part in ("word_embeddings", "position_embeddings", "token_type_embeddings")}
    names.update(_pair(f"{emb}.LayerNorm", "albert.embeddings.LayerNorm"))
    if model_type == "albert":
        projection = _pair("albert.encoder.embedding_hidden_mapping_in",
                           "albert.embeddings.embedding_hidden_mapping_in")
        names.update(projection if config.has_embedding_projection else dict.fromkeys(projection))
        N, G, K = albert_groups(config)
        layers = [(f"albert.encoder.albert_layer_groups.{s // K}.albert_layers.{s % K}", s)
                  for s in range(G * K)]
        parts = {"attention.query": "attention.query", "attention.key": "attention.key",
                 "attention.value": "attention.value", "attention.dense": "attention.dense",
                 "attention.LayerNorm": "attention.LayerNorm", "ffn": "ffn.ffn",
                 "ffn_output": "ffn.ffn_output", "full_layer_layer_norm": "ffn.LayerNorm"}
        head = {"albert.pooler": "albert.pooler", "predictions.dense": "predictions.dense",
                "predictions.LayerNorm": "predictions.LayerNorm",
                "sop_classifier.classifier": "sop_classifier"}
        bias, decoder = "predictions.bias", "predictions.decoder"
    else:
        layers = [(f"bert.encoder.layer.{i}", i) for i in range(config.num_hidden_layers)]
        parts = {"attention.self.query": "attention.query", "attention.self.key": "attention.key",
                 "attention.self.value": "attention.value", "attention.output.dense": "attention.dense",
                 "attention.output.LayerNorm": "attention.LayerNorm", "intermediate.dense": "ffn.ffn",
                 "output.dense": "ffn.ffn_output", "output.LayerNorm": "ffn.LayerNorm"}
        head = {"bert.pooler.dense": "albert.pooler", "cls.predictions.transform.dense": "predictions.dense",
                "cls.predictions.transform.LayerNorm": "predictions.LayerNorm",
                "cls.seq_relationship": "sop_classifier"}
        bias, decoder = "cls.predictions.bias", "cls.predictions.decoder"
    for hf, s in layers:
        for hf_part, ms_part in parts.items():
            component, sub = ms_part.split(".", 1)
            ms = (f"albert.encoder.{component}_sets.{s}." + ("LayerNorm" if sub == "LayerNorm"
                                                             else f"sublayer.{sub}"))
            names.update(_pair(f"{hf}.{hf_part}", ms))
    for hf, ms in head.items():
        names.update(_pair(hf, ms))
    if config.tie_word_embeddings:   # Hugging Face ties decoder.bias to predictions.bias
        names[bias] = "predictions.decoder.bias"
        optional = {f"{decoder}.bias": bias, f"{decoder}.weight": f"{emb}.word_embeddings.weight"}
    else:                            # untied, Hugging Face's decoder uses its own bias and
        names.update(_pair(decoder, "predictions.decoder"))    # predictions.bias goes unused
        optional = {bias: f"{decoder}.bias"}
    if heads:
        return names, optional
    return {hf[len(top) + 1:]: (ms if ms is None else ms[len("albert."):])     # AlbertModel's names
            for hf, ms in names.items() if not hf.startswith(HEADS)}, {}


def match_prefix(entries, names, model_type, heads, directory):
    """Names as ``names`` spells them: a base-model file ("embeddings....") read into a model with
    heads is refused; a file with heads read into a base model drops the prefix and the heads. A
    prefix is matched as the text it is, never cut by its length: in a file with heads, a name
    that neither starts with it nor is a head's fits no layout and is refused, naming it."""
    renamed = {}
    for name, e in entries.items():
        if not name.endswith(_BUFFERS):
            if _renamed(name) in renamed:
                both = " and ".join(sorted((name, renamed[_renamed(name)][-1])))
                raise HubError(f"{directory}: holds both {both}, two "
                               "names of one LayerNorm parameter (TensorFlow's and PyTorch's); which one "
                               "is meant cannot be told")
            renamed[_renamed(name)] = (*e, name)
    entries = renamed
    top = f"{model_type}."
    prefixed = any(name.startswith(top) for name in entries)
    if heads and not prefixed:
        raise HubError(f"{directory}: holds a base {model_type} model without the pre-training heads; "
                       f"load it with AlbertModel.from_pretrained (the encoder alone)")
    if not heads and prefixed:
        strays = sorted(name for name in entries if not name.startswith((top, *HEADS)))
        if strays:
            raise HubError(f"{directory}: {some(strays)} fit(s) no known layout: a {model_type} "
                           f"folder with pre-training heads names its encoder's tensors {top}...")
        entries = {name.removeprefix(top): e for name, e in entries.items() if name.startswith(top)}
    return entries


def some(items, separator=", ", shown=3):
    """The first ``shown`` of ``items`` and how many more: a message of bounded length, however
    many names an edited file holds."""
    more = len(items) - shown
    return separator.join(items[:shown]) + (f" and {more:,} more" if more > 0 else "")


def _renamed(name):
    """Checkpoints converted from TensorFlow name LayerNorm's gain and shift gamma and beta
    (Google's BERT, and files on the Hugging Face hub that kept those names); transformers renames
    them on load, and so does this."""
    for old, new in ((".gamma", ".weight"), (".beta", ".bias")):
        if name.endswith(old) and "LayerNorm" in name:
            return name[: -len(old)] + new
    return name
