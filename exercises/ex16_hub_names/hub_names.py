"""Exercise 16: what a Hugging Face checkpoint's names say about its sharing (course chapter 4;
ALBERT, Lan et al., 2019, Sec. 3.1, as Hugging Face's transformers lays it out).

A ``model.safetensors`` file is a flat table, name -> array; read with
``safetensors.numpy.load_file`` it is a dict of NumPy arrays, which is what every function here
takes (the tests build such dicts themselves; no file and no package is needed). A file holds no
objects, so no identities: a model's sharing survives in it only as *names* that say which layers
share, or as the same values stored twice.

Hugging Face's ALBERT spells its cross-layer sharing in the names. Its encoder holds G =
``num_hidden_groups`` groups of K = ``inner_group_num`` layers, each layer 16 tensors::

    albert.encoder.albert_layer_groups.{g}.albert_layers.{k}.attention.query.weight      (H, H)
        ... attention.{query,key,value,dense}.{weight,bias}, attention.LayerNorm.{weight,bias},
        ffn.weight (I, H), ffn.bias (I,), ffn_output.weight (H, I), ffn_output.bias (H,),
        full_layer_layer_norm.{weight,bias} (H,)

(a weight is PyTorch's (out, in)). ``AlbertTransformer.forward`` in transformers'
``modeling_albert.py`` runs N = ``num_hidden_layers`` positions; position i runs group::

    group_idx = int(i / (self.config.num_hidden_layers / self.config.num_hidden_groups))

whose K layers then run in turn (minishare's ``minishare/models/hub/layout.py``, ``hf_schedule``,
follows the same line). The rest of the file: ``albert.embeddings.{word,position,token_type}_embeddings.weight``
((V, E), (P, E), (T, E)), ``albert.embeddings.LayerNorm`` (E,), the E -> H projection
``albert.encoder.embedding_hidden_mapping_in`` ((H, E) and (H,)), ``albert.pooler`` ((H, H), (H,)),
and the heads ``predictions.dense`` ((E, H), (E,)), ``predictions.LayerNorm`` (E,),
``predictions.bias`` (V,), ``predictions.decoder.{weight,bias}`` ((V, E), (V,)) and
``sop_classifier.classifier`` ((2, H), (2,)). A base model (``AlbertModel``) has the same names
without ``albert.`` and without the heads. Some files also carry the buffers
``embeddings.position_ids`` and ``embeddings.token_type_ids`` (integers, not parameters).

The MLM decoder's weight *is* the word-embedding table (tied, ``tie_word_embeddings``): a file
written by transformers leaves ``predictions.decoder.weight`` out, other writers store it again,
equal to ``albert.embeddings.word_embeddings.weight``, value for value.

BERT's encoder has one set of names per layer, ``bert.encoder.layer.{i}.`` followed by
``attention.self.{query,key,value}``, ``attention.output.dense``, ``attention.output.LayerNorm``,
``intermediate.dense``, ``output.dense``, ``output.LayerNorm`` (each ``.weight`` and ``.bias``);
its other names are ``bert.embeddings.*`` (as ALBERT's, with E = H), ``bert.pooler.dense``,
``cls.predictions.transform.dense``, ``cls.predictions.transform.LayerNorm``,
``cls.predictions.bias``, ``cls.predictions.decoder.{weight,bias}`` and ``cls.seq_relationship``.
Nothing in a BERT's names is shared, and nothing in them could say so.

``minishare/models/hub/`` reads and writes these files (its own names for the tensors are not
this exercise's): please do not look at it until you are done.
"""
import re

import numpy as np

# One tensor of an ALBERT encoder layer: group g, inner layer k, and the part
# ("attention.query.weight"); with or without the "albert." of a model with heads. Use fullmatch.
ALBERT_LAYER = re.compile(r"(?:albert\.)?encoder\.albert_layer_groups\.(\d+)\.albert_layers\.(\d+)\.(.+)")
# One tensor of a BERT encoder layer: layer i and the part ("attention.self.query.weight").
BERT_LAYER = re.compile(r"(?:bert\.)?encoder\.layer\.(\d+)\.(.+)")


def plan_from_names(names, num_hidden_layers, inner_group_num=None):
    """Task 1. The sharing plan that an ALBERT checkpoint's names imply: the distinct layer set
    each of the N · K layer positions runs, a list of N · K ints.

    ``names``: the file's tensor names, in any order (a safetensors file sorts them as strings,
    so group 10 comes before group 2). ``num_hidden_layers`` N comes from ``config.json`` (the
    names cannot say how often a group runs); ``inner_group_num``, when given, is config.json's K
    and must agree with the names. G and K are read from the names: set s = g · K + k is layer k
    of group g. Position i · K + k (i < N, k < K) runs set ``int(i / (N / G)) * K + k``, the line
    of transformers quoted above, computed as it computes it: in floating point. That is
    ⌊i · G / N⌋ in exact arithmetic, but not always in floats (N = 18, G = 14: position 9 runs
    group 6, although 9 · 14 / 18 = 7), and the checkpoint's weights were trained under what the
    code computed.

    Examples (K = 1 unless said)::

        G = 1, N = 12 (albert-base-v2)     [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        G = 3, N = 6                       [0, 0, 1, 1, 2, 2]
        G = 3, N = 7                       [0, 0, 0, 1, 1, 2, 2]
        G = 1, K = 2, N = 2                [0, 1, 0, 1]      (Cycle, A B A B)
        G = 2, K = 2, N = 2                [0, 1, 2, 3]

    Raises ValueError, saying why, when the names do not fit: no ALBERT layer among them (a BERT
    checkpoint); a name under the encoder that is neither a layer's nor
    ``encoder.embedding_hidden_mapping_in``'s; groups not numbered 0, 1, ..., G − 1; a group whose
    inner layers are not 0, ..., K − 1 with the same K as the others; a layer whose parts differ
    from layer 0 of group 0's; ``inner_group_num`` given and not K; N not a positive int; G > N
    (a group no position runs). Other names (embeddings, pooler, heads, buffers) are ignored."""
    ### BEGIN SOLUTION task 1
    N = num_hidden_layers
    if isinstance(N, bool) or not isinstance(N, int) or N < 1:
        raise ValueError(f"num_hidden_layers must be a positive int, got {N!r}")
    parts = {}                                    # (g, k) -> the parts that layer holds
    for name in names:
        m = ALBERT_LAYER.fullmatch(name)
        if m:
            parts.setdefault((int(m[1]), int(m[2])), set()).add(m[3])
            continue
        inside = name[len("albert."):] if name.startswith("albert.") else name
        if inside.startswith("encoder.") and not inside.startswith("encoder.embedding_hidden_mapping_in."):
            raise ValueError(f"{name}: under the encoder but not an ALBERT layer "
                             "(encoder.albert_layer_groups.{g}.albert_layers.{k}....)")
    if not parts:
        raise ValueError("no ALBERT encoder layer among the names (albert.encoder.albert_layer_groups."
                         "{g}.albert_layers.{k}....): not an ALBERT checkpoint")
    groups = sorted({g for g, _ in parts})
    G = len(groups)
    if groups != list(range(G)):
        missing = sorted(set(range(groups[-1] + 1)) - set(groups))
        raise ValueError(f"the names hold groups {groups}: group(s) {missing} are missing")
    inner = {g: sorted(k for h, k in parts if h == g) for g in groups}
    K = len(inner[0])
    for g in groups:
        if inner[g] != list(range(K)):
            raise ValueError(f"group {g} holds inner layers {inner[g]}; every group must hold 0..{K - 1}, "
                             "as group 0 does")
    if inner_group_num is not None and inner_group_num != K:
        raise ValueError(f"inner_group_num={inner_group_num!r}, but the names hold {K} layers per group")
    first = parts[0, 0]
    for (g, k), held in sorted(parts.items()):
        if held != first:
            odd = sorted(held ^ first)
            raise ValueError(f"layer {k} of group {g} differs from layer 0 of group 0 in {odd}")
    if G > N:
        raise ValueError(f"{G} groups for num_hidden_layers={N}: groups {list(range(N, G))} would never run")
    # transformers' AlbertTransformer.forward, in floats as it computes it
    return [int(i / (N / G)) * K + k for i in range(N) for k in range(K)]
    ### END SOLUTION


def tied_pairs(tensors):
    """Task 2. Which tensors of a file are one weight stored twice.

    ``tensors``: {name: NumPy array}, as ``safetensors.numpy.load_file`` gives (separate arrays,
    even for a weight the model shared). Two tensors are *tied* when they have the same shape, the
    same dtype and equal values (``np.array_equal``): a file has no identity to ask. Two of the
    same shape that are not tied are *lookalikes*: the query and key weights of a layer, both
    (H, H), are two weights.

    Returns ``(tied, lookalikes)``: two lists of pairs ``(a, b)`` of names, ``a < b``, sorted. A
    weight stored three times gives three tied pairs. Example::

        {"a": [[1, 2], [3, 4]], "b": a copy of a, "c": [[1, 2], [3, 5]], "d": [1, 2, 3, 4]}
        -> ([("a", "b")], [("a", "c"), ("b", "c")])

    "d" holds a's values and a's bytes, in another shape: not a's weight. Equal values can also be
    a coincidence (two LayerNorm gains still at their initial ones): the file cannot tell, and
    this rule calls them tied."""
    ### BEGIN SOLUTION task 2
    names = sorted(tensors)
    tied, lookalikes = [], []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            x, y = tensors[a], tensors[b]
            if x.shape != y.shape:
                continue
            if x.dtype == y.dtype and np.array_equal(x, y):
                tied.append((a, b))
            else:
                lookalikes.append((a, b))
    return tied, lookalikes
    ### END SOLUTION


def unique_parameter_count(tensors):
    """Task 2. The number of scalars in ``tensors`` ({name: array}, every one a parameter), each
    weight counted once however many times the file stores it: tensors tied by ``tied_pairs``'
    rule (same shape, dtype and values) count once together. A weight stored three times counts
    once, not −1 times. For an ALBERT file that carries the tied decoder, this is the file's count
    less V · E + V (the decoder's weight and bias)."""
    ### BEGIN SOLUTION task 2
    kept = []                                     # one array of each group of equal ones
    for name in sorted(tensors):
        x = tensors[name]
        if not any(x.shape == y.shape and x.dtype == y.dtype and np.array_equal(x, y) for y in kept):
            kept.append(x)
    return sum(int(x.size) for x in kept)
    ### END SOLUTION


def to_minishare(names):
    """Task 3. {Hugging Face name: flat name} for every name of an ALBERT or a BERT checkpoint, in
    one flat naming (this exercise's, not the library's) that numbers an encoder layer by its
    distinct set, so that an unshared ALBERT (G = N, K = 1) and a BERT of the same size get the
    same names for their layers.

    The flat names (each ``.weight`` and ``.bias`` keeps its suffix)::

        emb.word  emb.pos  emb.seg      the word, position and token-type tables (.weight only)
        emb.norm                        the embeddings' LayerNorm
        emb.proj                        ALBERT's E -> H projection (embedding_hidden_mapping_in)
        enc.{s}.attn.q / .k / .v        set s's query, key and value projections
        enc.{s}.attn.o                  the attention's output projection
        enc.{s}.attn.norm               the LayerNorm after the attention's residual sum
        enc.{s}.ffn.w1 / .w2            the FFN's H -> I and I -> H matrices
        enc.{s}.ffn.norm                the LayerNorm after the FFN's residual sum
        pool                            the pooler's dense layer
        mlm.dense  mlm.norm             the MLM head's transform: dense H -> E, then LayerNorm
        mlm.bias                        the MLM output bias (predictions.bias)
        mlm.decoder                     the MLM decoder (the tied copy, when the file has it)
        pair                            the sentence-pair head (ALBERT's SOP, BERT's NSP)

    The set s: BERT's layer i is s = i; ALBERT's layer k of group g is s = g · K + k, K the number
    of inner layers the names show (1 + the largest ``albert_layers`` index). Examples::

        albert.encoder.albert_layer_groups.1.albert_layers.0.ffn_output.weight  -> enc.1.ffn.w2.weight   (K = 1)
        albert.encoder.albert_layer_groups.1.albert_layers.0.attention.query.bias -> enc.2.attn.q.bias   (K = 2)
        bert.encoder.layer.3.attention.output.LayerNorm.weight                  -> enc.3.attn.norm.weight
        predictions.LayerNorm.bias                                              -> mlm.norm.bias
        bert.pooler.dense.weight                                                -> pool.weight

    Names with or without the model's ``albert.``/``bert.`` prefix (a base model) are read alike.
    The buffers ``embeddings.position_ids`` and ``embeddings.token_type_ids`` are left out of the
    result. Raises ValueError naming the name for any other name, and when the names hold both
    ALBERT and BERT layers."""
    ### BEGIN SOLUTION task 3
    albert_parts = {"attention.query": "attn.q", "attention.key": "attn.k", "attention.value": "attn.v",
                    "attention.dense": "attn.o", "attention.LayerNorm": "attn.norm",
                    "ffn": "ffn.w1", "ffn_output": "ffn.w2", "full_layer_layer_norm": "ffn.norm"}
    bert_parts = {"attention.self.query": "attn.q", "attention.self.key": "attn.k",
                  "attention.self.value": "attn.v", "attention.output.dense": "attn.o",
                  "attention.output.LayerNorm": "attn.norm", "intermediate.dense": "ffn.w1",
                  "output.dense": "ffn.w2", "output.LayerNorm": "ffn.norm"}
    others = {"embeddings.word_embeddings": "emb.word", "embeddings.position_embeddings": "emb.pos",
              "embeddings.token_type_embeddings": "emb.seg", "embeddings.LayerNorm": "emb.norm",
              "encoder.embedding_hidden_mapping_in": "emb.proj",
              "pooler": "pool", "pooler.dense": "pool",                         # ALBERT's, BERT's
              "predictions.dense": "mlm.dense", "predictions.LayerNorm": "mlm.norm",
              "predictions.decoder": "mlm.decoder", "sop_classifier.classifier": "pair",
              "cls.predictions.transform.dense": "mlm.dense",
              "cls.predictions.transform.LayerNorm": "mlm.norm",
              "cls.predictions.decoder": "mlm.decoder", "cls.seq_relationship": "pair"}
    output_bias = ("predictions.bias", "cls.predictions.bias")                 # no .weight beside it
    buffers = ("embeddings.position_ids", "embeddings.token_type_ids")
    names = list(names)
    albert = [m for m in map(ALBERT_LAYER.fullmatch, names) if m]
    bert = [m for m in map(BERT_LAYER.fullmatch, names) if m]
    if albert and bert:
        raise ValueError(f"both ALBERT layers ({albert[0].string}) and BERT layers ({bert[0].string})")
    K = 1 + max((int(m[2]) for m in albert), default=0)

    def split(part, table, name):                 # "attention.query.weight" -> "attn.q.weight"
        head, _, suffix = part.rpartition(".")
        if head not in table or suffix not in ("weight", "bias"):
            raise ValueError(f"{name}: not a tensor of a Hugging Face ALBERT or BERT checkpoint")
        return f"{table[head]}.{suffix}"

    flat = {}
    for name in names:
        a, b = ALBERT_LAYER.fullmatch(name), BERT_LAYER.fullmatch(name)
        if a:
            flat[name] = f"enc.{int(a[1]) * K + int(a[2])}." + split(a[3], albert_parts, name)
            continue
        if b:
            flat[name] = f"enc.{int(b[1])}." + split(b[2], bert_parts, name)
            continue
        rest = re.sub(r"^(albert|bert)\.", "", name)
        if rest in buffers:
            continue
        if rest in output_bias:
            flat[name] = "mlm.bias"
            continue
        flat[name] = split(rest, others, name)
    return flat
    ### END SOLUTION
