"""Cases of exercise 16: checkpoints built here as {name: NumPy array}, laid out as Hugging Face's
ALBERT and BERT files are (transformers' modeling_albert.py and modeling_bert.py), with shapes
small enough to read (V = 11, E = 3, H = 4, I = 6, P = 5, T = 2).

Each probe returns what ``hub_names`` (the student's module) makes of names built here, of
hand-made dicts, or of whole checkpoints the grader builds (``given``: which names it stored twice
stays on its side); each judge checks that against the construction, hand-worked schedules and
names, and transformers' group formula written out in the hidden cases."""
import numpy as np

from minishare.grader.cases import case, raises

SIZES = dict(V=11, E=3, H=4, I=6, P=5, T=2)
ALBERT_PARTS = ("attention.query", "attention.key", "attention.value", "attention.dense",
                "attention.LayerNorm", "ffn", "ffn_output", "full_layer_layer_norm")
BERT_PARTS = ("attention.self.query", "attention.self.key", "attention.self.value",
              "attention.output.dense", "attention.output.LayerNorm", "intermediate.dense",
              "output.dense", "output.LayerNorm")


def layer_shapes(parts, V, E, H, I, P, T):
    """{part.weight/bias: shape} of one encoder layer: (out, in) weights, as PyTorch stores them."""
    out = {}
    for part in parts:
        if part.endswith("LayerNorm") or part == "full_layer_layer_norm":
            w, b = (H,), (H,)
        elif part in ("ffn", "intermediate.dense"):
            w, b = (I, H), (I,)
        elif part in ("ffn_output", "output.dense"):
            w, b = (H, I), (H,)
        else:
            w, b = (H, H), (H,)
        out[f"{part}.weight"], out[f"{part}.bias"] = w, b
    return out


def albert_shapes(G=1, K=1, heads=True, decoder=True, buffers=False, **sizes):
    """{name: shape} of an ALBERT checkpoint with G groups of K layers (``heads``: AlbertForPreTraining,
    else AlbertModel without the "albert." prefix; ``decoder``: the tied copy of the word table)."""
    s = {**SIZES, **sizes}
    V, E, H, P, T = s["V"], s["E"], s["H"], s["P"], s["T"]
    top = "albert." if heads else ""
    shapes = {f"{top}embeddings.word_embeddings.weight": (V, E),
              f"{top}embeddings.position_embeddings.weight": (P, E),
              f"{top}embeddings.token_type_embeddings.weight": (T, E),
              f"{top}embeddings.LayerNorm.weight": (E,), f"{top}embeddings.LayerNorm.bias": (E,),
              f"{top}encoder.embedding_hidden_mapping_in.weight": (H, E),
              f"{top}encoder.embedding_hidden_mapping_in.bias": (H,)}
    for g in range(G):
        for k in range(K):
            for part, shape in layer_shapes(ALBERT_PARTS, **s).items():
                shapes[f"{top}encoder.albert_layer_groups.{g}.albert_layers.{k}.{part}"] = shape
    shapes.update({f"{top}pooler.weight": (H, H), f"{top}pooler.bias": (H,)})
    if heads:
        shapes.update({"predictions.dense.weight": (E, H), "predictions.dense.bias": (E,),
                       "predictions.LayerNorm.weight": (E,), "predictions.LayerNorm.bias": (E,),
                       "predictions.bias": (V,),
                       "sop_classifier.classifier.weight": (2, H), "sop_classifier.classifier.bias": (2,)})
        if decoder:
            shapes.update({"predictions.decoder.weight": (V, E), "predictions.decoder.bias": (V,)})
    if buffers:
        shapes.update({f"{top}embeddings.position_ids": (1, P), f"{top}embeddings.token_type_ids": (1, P)})
    return shapes


def bert_shapes(N=2, decoder=True, **sizes):
    """{name: shape} of a BertForPreTraining checkpoint of N layers (E = H)."""
    s = {**SIZES, **sizes}
    V, H, P, T = s["V"], s["H"], s["P"], s["T"]
    shapes = {"bert.embeddings.word_embeddings.weight": (V, H),
              "bert.embeddings.position_embeddings.weight": (P, H),
              "bert.embeddings.token_type_embeddings.weight": (T, H),
              "bert.embeddings.LayerNorm.weight": (H,), "bert.embeddings.LayerNorm.bias": (H,)}
    for i in range(N):
        for part, shape in layer_shapes(BERT_PARTS, **s).items():
            shapes[f"bert.encoder.layer.{i}.{part}"] = shape
    shapes.update({"bert.pooler.dense.weight": (H, H), "bert.pooler.dense.bias": (H,),
                   "cls.predictions.transform.dense.weight": (H, H),
                   "cls.predictions.transform.dense.bias": (H,),
                   "cls.predictions.transform.LayerNorm.weight": (H,),
                   "cls.predictions.transform.LayerNorm.bias": (H,), "cls.predictions.bias": (V,),
                   "cls.seq_relationship.weight": (2, H), "cls.seq_relationship.bias": (2,)})
    if decoder:
        shapes.update({"cls.predictions.decoder.weight": (V, H), "cls.predictions.decoder.bias": (V,)})
    return shapes


# The tied copies a file may carry: {copy: the tensor it repeats}.
TIED = {"predictions.decoder.weight": "albert.embeddings.word_embeddings.weight",
        "predictions.decoder.bias": "predictions.bias",
        "cls.predictions.decoder.weight": "bert.embeddings.word_embeddings.weight",
        "cls.predictions.decoder.bias": "cls.predictions.bias"}


def checkpoint(rng, shapes, dtype=np.float32, fresh_norms=False):
    """{name: array} as a file would give: random values (buffers: arange and zeros), and each
    tied copy a *separate* array equal to what it repeats (a file has no identity). With
    ``fresh_norms`` every LayerNorm gain is ones and every LayerNorm shift zeros (a model just
    initialized). The grader's side: which names are copies is task 2's answer."""
    tensors = {}
    for name, shape in shapes.items():
        if name.endswith("position_ids"):
            tensors[name] = np.arange(shape[1], dtype=np.int64)[None]
        elif name.endswith("token_type_ids"):
            tensors[name] = np.zeros(shape, dtype=np.int64)
        elif fresh_norms and ("LayerNorm" in name or "layer_norm" in name):
            tensors[name] = (np.ones if name.endswith("weight") else np.zeros)(shape, dtype=dtype)
        else:
            tensors[name] = rng.standard_normal(shape).astype(dtype)
    for copy, original in TIED.items():
        if copy in tensors:
            tensors[copy] = tensors[original].copy()
    return tensors


def pairs(found):
    """A list of pairs as a sorted list of sorted tuples (the order is not what is graded)."""
    return sorted(tuple(sorted(p)) for p in found)


# ------------------------------------------------------------------------------------ task 1
@case("ex16_task1")
def test_plan_of_albert_names(hub_names):
    """albert-base-v2's layout (one group, 12 positions), three groups of two, and Cycle as one
    group of two inner layers."""
    return {"base": hub_names.plan_from_names(list(albert_shapes(G=1)), 12),
            "3 groups of 6": hub_names.plan_from_names(list(albert_shapes(G=3)), 6),
            "cycle": hub_names.plan_from_names(list(albert_shapes(G=1, K=2)), 2, inner_group_num=2)}


@test_plan_of_albert_names.judge
def _(out, ref):
    assert out["base"] == [0] * 12, out["base"]
    assert out["3 groups of 6"] == [0, 0, 1, 1, 2, 2], out["3 groups of 6"]
    assert out["cycle"] == [0, 1, 0, 1], out["cycle"]


@case("ex16_task1")
def test_plan_refuses_bert_names(hub_names):
    """A BERT checkpoint's names hold no ALBERT group: no plan to read."""
    return raises(ValueError, hub_names.plan_from_names, list(bert_shapes(N=2)), 2)


@test_plan_refuses_bert_names.judge
def _(out, ref):
    assert out is True, "bert.encoder.layer.{i}... names must be refused"


### BEGIN HIDDEN TESTS
def transformers_schedule(N, G, K=1):
    """AlbertTransformer.forward (transformers, modeling_albert.py): position i runs group
    int(i / (num_hidden_layers / num_hidden_groups)), then that group's K layers in turn."""
    return [int(i / (N / G)) * K + k for i in range(N) for k in range(K)]


@case("ex16_task1")
def test_plan_when_groups_do_not_divide_layers(hub_names):
    """G does not divide N: transformers' groups are int(i / (N / G)), in floats."""
    return {f"{N} {G}": hub_names.plan_from_names(list(albert_shapes(G=G)), N)
            for N, G in ((7, 3), (5, 2), (18, 14), (27, 21), (36, 14), (45, 35))}


@test_plan_when_groups_do_not_divide_layers.judge
def _(out, ref):
    assert out["7 3"] == [0, 0, 0, 1, 1, 2, 2], out["7 3"]
    assert out["5 2"] == [0, 0, 0, 1, 1], out["5 2"]
    # 18 / 14 rounds up in floats, so 9 / (18 / 14) is just under 7: transformers runs group 6
    assert out["18 14"][9] == 6, f"position 9 of N = 18, G = 14 runs group 6 in transformers, got {out['18 14'][9]}"
    for key, plan in out.items():
        N, G = map(int, key.split())
        assert plan == transformers_schedule(N, G), (N, G, plan)


@case("ex16_task1")
def test_plan_for_every_g_and_k_of_names_in_any_order(hub_names, given):
    """Every G ≤ N ≤ 20 with K = 1 or 2 (K = 3 up to N = 8), with the names shuffled (a file sorts them as strings: group 10
    before group 2) and the heads, projection and buffers among them."""
    rng = np.random.default_rng(given["shuffle seed"])
    out = {}
    for N in range(1, 21):
        for G in range(1, N + 1):
            for K in ((1, 2, 3) if N <= 8 else (1, 2)):
                names = list(albert_shapes(G=G, K=K, buffers=True))
                rng.shuffle(names)
                out[f"{N} {G} {K}"] = hub_names.plan_from_names(names, N)
    return out


@test_plan_for_every_g_and_k_of_names_in_any_order.given
def _(rng):
    return {"shuffle seed": int(rng.integers(2 ** 31))}     # the lists are too long to send


@test_plan_for_every_g_and_k_of_names_in_any_order.judge
def _(out, ref):
    for key, plan in out.items():
        N, G, K = map(int, key.split())
        assert plan == transformers_schedule(N, G, K), (N, G, K, plan)


@case("ex16_task1")
def test_plan_of_a_base_model_and_an_agreeing_inner_group_num(hub_names):
    """AlbertModel's names (no "albert.", no heads), and config.json's K given and agreeing."""
    return [hub_names.plan_from_names(list(albert_shapes(G=2, K=2, heads=False, buffers=True)), 4),
            hub_names.plan_from_names(list(albert_shapes(G=2, K=3)), 2, inner_group_num=3)]


@test_plan_of_a_base_model_and_an_agreeing_inner_group_num.judge
def _(out, ref):
    assert out[0] == [0, 1, 0, 1, 2, 3, 2, 3], out[0]
    assert out[1] == [0, 1, 2, 3, 4, 5], out[1]


def without(names, dropped):
    return [n for n in names if not any(n.startswith(d) for d in dropped)]


@case("ex16_task1")
def test_plan_refuses_names_that_do_not_fit(hub_names):
    """Each of the ways a checkpoint's names can contradict the layout."""
    three = list(albert_shapes(G=3))
    pairs_of_2 = list(albert_shapes(G=2, K=2))
    plan = hub_names.plan_from_names
    stray = three + ["albert.encoder.layer.0.attention.self.query.weight"]
    part_missing = [n for n in three
                    if n != "albert.encoder.albert_layer_groups.2.albert_layers.0.ffn_output.bias"]
    return {
        "group 1 missing": raises(ValueError, plan, without(three, ["albert.encoder.albert_layer_groups.1."]), 6),
        "group 0 missing": raises(ValueError, plan, without(three, ["albert.encoder.albert_layer_groups.0."]), 6),
        "group 1 lacks layer 1": raises(ValueError, plan, without(
            pairs_of_2, ["albert.encoder.albert_layer_groups.1.albert_layers.1."]), 4),
        "group 1 lacks layer 0": raises(ValueError, plan, without(
            pairs_of_2, ["albert.encoder.albert_layer_groups.1.albert_layers.0."]), 4),
        "a layer lacks a tensor": raises(ValueError, plan, part_missing, 6),
        "inner_group_num disagrees": raises(ValueError, plan, pairs_of_2, 4, inner_group_num=1),
        "more groups than positions": raises(ValueError, plan, three, 2),
        "no positions": raises(ValueError, plan, three, 0),
        "a BERT layer in an ALBERT file": raises(ValueError, plan, stray, 6),
        "a base BERT": raises(ValueError, plan, [n[len("bert."):] for n in bert_shapes(N=2)
                                                 if n.startswith("bert.")], 2),
        "fits": raises(ValueError, plan, three, 6),
    }


@test_plan_refuses_names_that_do_not_fit.judge
def _(out, ref):
    assert out.pop("fits") is False, "a checkpoint whose names fit was refused"
    refused = [why for why, raised in out.items() if not raised]
    assert not refused, f"not refused: {refused}"
### END HIDDEN TESTS


# ------------------------------------------------------------------------------------ task 2
HAND = {"a": np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), "c": np.array([[1.0, 2.0], [3.0, 5.0]], np.float32),
        "d": np.array([1.0, 2.0, 3.0, 4.0], np.float32)}


@case("ex16_task2")
def test_tied_pairs_worked_example(hub_names):
    """The docstring's example: a copy is tied, one changed value makes a lookalike, and the same
    values (and bytes) in another shape are a different weight."""
    tensors = {**HAND, "b": HAND["a"].copy()}
    return {"pairs": hub_names.tied_pairs(tensors), "count": hub_names.unique_parameter_count(tensors)}


@test_tied_pairs_worked_example.judge
def _(out, ref):
    tied, lookalikes = out["pairs"]
    assert pairs(tied) == [("a", "b")], tied
    assert pairs(lookalikes) == [("a", "c"), ("b", "c")], lookalikes
    assert out["count"] == 4 + 4 + 4, out["count"]          # a (= b), c, d


@case("ex16_task2")
def test_tied_decoder_in_an_albert_file(hub_names, given):
    """An ALBERT file that stores the tied decoder again, as its own arrays."""
    return {"pairs": hub_names.tied_pairs(given), "count": hub_names.unique_parameter_count(given)}


@test_tied_decoder_in_an_albert_file.given
def _(rng):
    return checkpoint(rng, albert_shapes(G=1))


@test_tied_decoder_in_an_albert_file.judge
def _(out, ref):
    tied, lookalikes = out["pairs"]
    assert pairs(tied) == [("albert.embeddings.word_embeddings.weight", "predictions.decoder.weight"),
                           ("predictions.bias", "predictions.decoder.bias")], tied
    query = "albert.encoder.albert_layer_groups.0.albert_layers.0.attention.query.weight"
    key = query.replace("query", "key")
    assert tuple(sorted((query, key))) in pairs(lookalikes), "query and key weights have the same shape and are two weights"
    V, E, H, I, P, T = (SIZES[x] for x in "VEHIPT")
    layer = 4 * (H * H + H) + 2 * H + (I * H + I) + (H * I + H) + 2 * H
    expected = (V + P + T) * E + 2 * E + (H * E + H) + layer + (H * H + H) \
        + (E * H + E) + 2 * E + V + (2 * H + 2)          # the decoder's V·E + V counted with the table
    assert out["count"] == expected, (out["count"], expected)


### BEGIN HIDDEN TESTS
def value_groups(tensors):
    """The tensors grouped by (shape, dtype, bytes): an independent way to find equal arrays
    (exact here: the cases hold no NaN and no −0.0)."""
    groups = {}
    for name, x in tensors.items():
        groups.setdefault((x.shape, x.dtype.str, x.tobytes()), []).append(name)
    return list(groups.values())


def expected_pairs(tensors):
    tied = sorted((a, b) for group in value_groups(tensors) for a in group for b in group if a < b)
    same_shape = sorted((a, b) for a in tensors for b in tensors
                        if a < b and tensors[a].shape == tensors[b].shape)
    return tied, sorted(set(same_shape) - set(tied))


@case("ex16_task2")
def test_a_weight_stored_three_times(hub_names):
    """Three equal arrays are three tied pairs and count once."""
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    tensors = {"x": w.copy(), "y": w.copy(), "z": w.copy(), "u": w + 1}
    return {"pairs": hub_names.tied_pairs(tensors), "count": hub_names.unique_parameter_count(tensors)}


@test_a_weight_stored_three_times.judge
def _(out, ref):
    tied, lookalikes = out["pairs"]
    assert pairs(tied) == [("x", "y"), ("x", "z"), ("y", "z")], tied
    assert pairs(lookalikes) == [("u", "x"), ("u", "y"), ("u", "z")], lookalikes
    assert out["count"] == 12, f"x, y, z are one weight of 6 and u another: 12, got {out['count']}"


@case("ex16_task2")
def test_same_values_in_another_shape_or_dtype_are_not_tied(hub_names):
    """A reshaped copy has a's bytes and values; a float64 copy has its values: neither is the
    float32 weight stored again."""
    a = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    tensors = {"a": a, "a reshaped": a.reshape(3, 2).copy(), "a flat": a.ravel().copy(),
               "a in float64": a.astype(np.float64)}
    return {"pairs": hub_names.tied_pairs(tensors), "count": hub_names.unique_parameter_count(tensors)}


@test_same_values_in_another_shape_or_dtype_are_not_tied.judge
def _(out, ref):
    tied, lookalikes = out["pairs"]
    assert pairs(tied) == [], f"nothing is tied here, got {tied}"
    assert pairs(lookalikes) == [("a", "a in float64")], lookalikes
    assert out["count"] == 24, out["count"]


@case("ex16_task2")
def test_one_array_under_two_names_and_no_pairs(hub_names):
    """A loader that hands the same array out twice is tied too; and a file of one tensor, or none,
    has no pairs."""
    w = np.ones((3, 2), np.float32)
    both = {"first": w, "second": w}
    return {"pairs": hub_names.tied_pairs(both), "count": hub_names.unique_parameter_count(both),
            "one": hub_names.tied_pairs({"w": w}), "none": hub_names.tied_pairs({}),
            "count of none": hub_names.unique_parameter_count({})}


@test_one_array_under_two_names_and_no_pairs.judge
def _(out, ref):
    assert pairs(out["pairs"][0]) == [("first", "second")] and out["pairs"][1] == [], out["pairs"]
    assert out["count"] == 6, out["count"]
    assert out["one"] == [[], []] and out["none"] == [[], []], (out["one"], out["none"])
    assert out["count of none"] == 0, out["count of none"]


CHECKPOINTS = {"albert G=3 K=2": dict(kind="albert", G=3, K=2), "albert, no decoder": dict(kind="albert", G=2, decoder=False),
               "bert": dict(kind="bert", N=3), "bert, fresh norms": dict(kind="bert", N=2, fresh=True),
               "albert, fresh norms": dict(kind="albert", G=2, fresh=True)}


def build(rng, spec):
    spec = dict(spec)
    kind, fresh = spec.pop("kind"), spec.pop("fresh", False)
    shapes = albert_shapes(**spec) if kind == "albert" else bert_shapes(**spec)
    return checkpoint(rng, shapes, fresh_norms=fresh)


@case("ex16_task2")
def test_tied_pairs_and_count_of_whole_checkpoints(hub_names, given):
    """Whole ALBERT and BERT files, with and without the tied decoder; the "fresh" ones have every
    LayerNorm at its initial ones and zeros, equal by value (the file cannot tell them from ties)."""
    return {key: {"pairs": hub_names.tied_pairs(tensors), "count": hub_names.unique_parameter_count(tensors)}
            for key, tensors in given.items()}


@test_tied_pairs_and_count_of_whole_checkpoints.given
def _(rng):
    return {key: build(rng, spec) for key, spec in CHECKPOINTS.items()}


@test_tied_pairs_and_count_of_whole_checkpoints.judge
def _(out, ref, given):
    for key, tensors in given.items():
        tied, lookalikes = expected_pairs(tensors)
        assert pairs(out[key]["pairs"][0]) == tied, (key, "tied", out[key]["pairs"][0])
        assert pairs(out[key]["pairs"][1]) == lookalikes, (key, "lookalikes")
        count = sum(tensors[group[0]].size for group in value_groups(tensors))
        assert out[key]["count"] == count, (key, out[key]["count"], count)
    assert out["bert"]["count"] == sum(x.size for x in given["bert"].values()) \
        - SIZES["V"] * SIZES["H"] - SIZES["V"], "BERT's tied decoder counts once"
### END HIDDEN TESTS


# ------------------------------------------------------------------------------------ task 3
@case("ex16_task3")
def test_flat_names_of_an_albert(hub_names):
    """An ALBERT with heads and two groups of one layer."""
    return hub_names.to_minishare(list(albert_shapes(G=2)))


@test_flat_names_of_an_albert.judge
def _(out, ref):
    names = albert_shapes(G=2)
    assert set(out) == set(names), sorted(set(out) ^ set(names))
    assert len(set(out.values())) == len(out), "two names map to one flat name"
    layer = "albert.encoder.albert_layer_groups.{}.albert_layers.0."
    for hf, flat in {layer.format(1) + "ffn_output.weight": "enc.1.ffn.w2.weight",
                     layer.format(0) + "ffn.bias": "enc.0.ffn.w1.bias",
                     layer.format(1) + "attention.dense.weight": "enc.1.attn.o.weight",
                     layer.format(0) + "full_layer_layer_norm.weight": "enc.0.ffn.norm.weight",
                     layer.format(1) + "attention.LayerNorm.bias": "enc.1.attn.norm.bias",
                     "albert.encoder.embedding_hidden_mapping_in.weight": "emb.proj.weight",
                     "albert.embeddings.word_embeddings.weight": "emb.word.weight",
                     "albert.embeddings.token_type_embeddings.weight": "emb.seg.weight",
                     "albert.pooler.bias": "pool.bias", "predictions.bias": "mlm.bias",
                     "predictions.decoder.weight": "mlm.decoder.weight",
                     "predictions.LayerNorm.weight": "mlm.norm.weight",
                     "sop_classifier.classifier.bias": "pair.bias"}.items():
        assert out[hf] == flat, (hf, out[hf], flat)


@case("ex16_task3")
def test_flat_names_of_a_bert(hub_names):
    """A BertForPreTraining of two layers: attention.output.dense is the attention's, output.dense
    the FFN's."""
    return hub_names.to_minishare(list(bert_shapes(N=2)))


@test_flat_names_of_a_bert.judge
def _(out, ref):
    names = bert_shapes(N=2)
    assert set(out) == set(names), sorted(set(out) ^ set(names))
    assert len(set(out.values())) == len(out), "two names map to one flat name"
    for hf, flat in {"bert.encoder.layer.1.attention.output.dense.weight": "enc.1.attn.o.weight",
                     "bert.encoder.layer.1.output.dense.weight": "enc.1.ffn.w2.weight",
                     "bert.encoder.layer.0.intermediate.dense.bias": "enc.0.ffn.w1.bias",
                     "bert.encoder.layer.0.output.LayerNorm.weight": "enc.0.ffn.norm.weight",
                     "bert.encoder.layer.1.attention.output.LayerNorm.bias": "enc.1.attn.norm.bias",
                     "bert.encoder.layer.0.attention.self.value.weight": "enc.0.attn.v.weight",
                     "bert.embeddings.position_embeddings.weight": "emb.pos.weight",
                     "bert.pooler.dense.weight": "pool.weight",
                     "cls.predictions.transform.dense.bias": "mlm.dense.bias",
                     "cls.predictions.transform.LayerNorm.weight": "mlm.norm.weight",
                     "cls.predictions.bias": "mlm.bias", "cls.predictions.decoder.bias": "mlm.decoder.bias",
                     "cls.seq_relationship.weight": "pair.weight"}.items():
        assert out[hf] == flat, (hf, out[hf], flat)


### BEGIN HIDDEN TESTS
FLAT_LAYER = {"attention.query": "attn.q", "attention.key": "attn.k", "attention.value": "attn.v",
              "attention.dense": "attn.o", "attention.LayerNorm": "attn.norm", "ffn": "ffn.w1",
              "ffn_output": "ffn.w2", "full_layer_layer_norm": "ffn.norm",
              "attention.self.query": "attn.q", "attention.self.key": "attn.k",
              "attention.self.value": "attn.v", "attention.output.dense": "attn.o",
              "attention.output.LayerNorm": "attn.norm", "intermediate.dense": "ffn.w1",
              "output.dense": "ffn.w2", "output.LayerNorm": "ffn.norm"}


@case("ex16_task3")
def test_inner_layers_are_sets_g_times_k_plus_k(hub_names):
    """Two groups of two inner layers: layer k of group g is set 2g + k."""
    return hub_names.to_minishare(list(albert_shapes(G=2, K=2)))


@test_inner_layers_are_sets_g_times_k_plus_k.judge
def _(out, ref):
    for g in range(2):
        for k in range(2):
            for part, flat in FLAT_LAYER.items():
                if part not in ALBERT_PARTS:
                    continue
                for suffix in ("weight", "bias"):
                    hf = f"albert.encoder.albert_layer_groups.{g}.albert_layers.{k}.{part}.{suffix}"
                    assert out[hf] == f"enc.{2 * g + k}.{flat}.{suffix}", (hf, out[hf])


@case("ex16_task3")
def test_unshared_albert_and_bert_get_the_same_layer_names(hub_names):
    """An ALBERT of three groups of one layer (G = N = 3, nothing shared) and a BERT of three
    layers: the flat names of their layers, heads and embeddings are the same (ALBERT adds the
    projection)."""
    return [hub_names.to_minishare(list(albert_shapes(G=3))), hub_names.to_minishare(list(bert_shapes(N=3)))]


@test_unshared_albert_and_bert_get_the_same_layer_names.judge
def _(out, ref):
    albert, bert = out
    assert set(albert.values()) - set(bert.values()) == {"emb.proj.weight", "emb.proj.bias"}, \
        sorted(set(albert.values()) ^ set(bert.values()))
    assert set(bert.values()) <= set(albert.values())
    for i in range(3):
        for part in BERT_PARTS:
            for suffix in ("weight", "bias"):
                hf = f"bert.encoder.layer.{i}.{part}.{suffix}"
                assert bert[hf] == f"enc.{i}.{FLAT_LAYER[part]}.{suffix}", (hf, bert[hf])


@case("ex16_task3")
def test_a_base_model_with_buffers(hub_names):
    """AlbertModel's names (no prefix, no heads) with the buffers, which are left out."""
    return hub_names.to_minishare(list(albert_shapes(G=1, heads=False, buffers=True)))


@test_a_base_model_with_buffers.judge
def _(out, ref):
    names = [n for n in albert_shapes(G=1, heads=False) if not n.endswith(("position_ids", "token_type_ids"))]
    assert set(out) == set(names), sorted(set(out) ^ set(names))
    assert out["encoder.albert_layer_groups.0.albert_layers.0.ffn.weight"] == "enc.0.ffn.w1.weight"
    assert out["embeddings.LayerNorm.bias"] == "emb.norm.bias"
    assert out["encoder.embedding_hidden_mapping_in.bias"] == "emb.proj.bias"
    assert out["pooler.weight"] == "pool.weight"


@case("ex16_task3")
def test_flat_names_refuse_what_they_do_not_know(hub_names):
    """A name of neither layout, and a file that mixes ALBERT and BERT layers."""
    albert = list(albert_shapes(G=1))
    return {"lm_head.weight": raises(ValueError, hub_names.to_minishare, albert + ["lm_head.weight"]),
            "an unknown layer part": raises(ValueError, hub_names.to_minishare, albert + [
                "albert.encoder.albert_layer_groups.0.albert_layers.0.attention.rotary.weight"]),
            "mixed layers": raises(ValueError, hub_names.to_minishare, albert + [
                "bert.encoder.layer.0.attention.self.query.weight"]),
            "fits": raises(ValueError, hub_names.to_minishare, albert)}


@test_flat_names_refuse_what_they_do_not_know.judge
def _(out, ref):
    assert out.pop("fits") is False, "names that fit were refused"
    refused = [why for why, raised in out.items() if not raised]
    assert not refused, f"not refused: {refused}"
### END HIDDEN TESTS
