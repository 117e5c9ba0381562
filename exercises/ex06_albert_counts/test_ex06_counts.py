"""Cases of exercise 6 against ALBERT's Tables 3 and 4 (the paper's rounded millions), hand counts,
and the tensors of a model the judge builds (minishare.count_parameters, run in the grader's
process: it walks the parameters and knows nothing of the formula). The paper's numbers stay with
the judges: a probe gets only the rows to count, from its case's ``given`` function, which also
draws the sizes of the hidden cases' tiny models."""
import math

import minishare
from minishare.grader.cases import case
from minishare.models import AlbertConfig

# The paper prints millions rounded or truncated; BERT-base-shaped rows (E = 768 not-shared) are
# printed 108M although the architecture with its pooler has 109.08M (as Table 1 prints it).
TABLE_3 = {64: (87, 10), 128: (89, 12), 256: (93, 16), 768: (108, 31)}          # not-shared, all-shared
TABLE_4 = {"all-shared": (31, 12), "shared-attention": (83, 64),
           "shared-ffn": (57, 38), "not-shared": (108, 89)}                      # E = 768, E = 128


def albert_base(**fields):
    return AlbertConfig.from_preset("albert-base", **fields)


def agrees_with_paper(count, millions, inconsistent=False):
    exact = count / 1e6
    if inconsistent:
        return abs(exact - millions) <= 1.1
    return millions in (round(exact), math.floor(exact))


TINY = dict(vocab_size=50, embedding_size=6, hidden_size=8, num_hidden_layers=4, num_attention_heads=2,
            intermediate_size=12, max_position_embeddings=16)


def tiny(**fields):
    return AlbertConfig(**{**TINY, **fields})


def built(fields):
    """The reference: the tensors of the model the fields describe, counted once each."""
    return minishare.count_parameters(tiny(**fields))


@case("ex06_task1")
def test_embedding_of_albert_base_by_hand(counts):
    """30,000·128 + 512·128 + 2·128 + 2·128 (LayerNorm) + 128·768 + 768, and with the word table
    padded to a multiple of 128: 30,080 rows."""
    return [counts.embedding_parameters(albert_base()), counts.embedding_parameters(albert_base(), pad_vocab_to=128)]


@test_embedding_of_albert_base_by_hand.judge
def _(out, ref):
    rest = 512 * 128 + 2 * 128 + 256 + 128 * 768 + 768
    assert out == [30000 * 128 + rest, 30080 * 128 + rest], out


@case("ex06_task2")
def test_sets_of_albert_base_by_hand(counts):
    return [counts.attention_set_parameters(albert_base()), counts.ffn_set_parameters(albert_base())]


@test_sets_of_albert_base_by_hand.judge
def _(out, ref):
    assert out == [4 * (768 * 768 + 768) + 2 * 768, 2 * 768 * 3072 + 3072 + 768 + 2 * 768], out


@case("ex06_task3")
def test_table_3_all_shared_and_not_shared(counts, given):
    return {f"{E} {sharing}": counts.albert_parameters(albert_base(embedding_size=E, sharing=sharing))
            for E in given for sharing in ("not-shared", "all-shared")}


@test_table_3_all_shared_and_not_shared.given
def _(rng):
    return list(TABLE_3)                 # the rows' E


@test_table_3_all_shared_and_not_shared.judge
def _(out, ref):
    for E, (not_shared, all_shared) in TABLE_3.items():
        assert agrees_with_paper(out[f"{E} not-shared"], not_shared, inconsistent=E == 768), (E, out[f"{E} not-shared"])
        assert agrees_with_paper(out[f"{E} all-shared"], all_shared), (E, out[f"{E} all-shared"])


TINY_VARIANTS = {sharing: dict(sharing=sharing) for sharing in ("all-shared", "not-shared", "shared-attention", "shared-ffn")}


@case("ex06_task3")
def test_tiny_model_counts_match_the_built_model(counts):
    return {name: counts.albert_parameters(tiny(**fields)) for name, fields in TINY_VARIANTS.items()}


@test_tiny_model_counts_match_the_built_model.judge
def _(out, ref):
    for name, fields in TINY_VARIANTS.items():
        assert out[name] == built(fields), (name, out[name], built(fields))


### BEGIN HIDDEN TESTS
EMBEDDING_VARIANTS = {"E = H": dict(embedding_size=8), "E = H, projection kept": dict(embedding_size=8, embedding_projection=True),
                      "E < H": dict(), "E > H": dict(embedding_size=10)}
PADDINGS = (1, 8, 10, 25, 50, 64, 128)


def tiny_sizes(rng):
    """Given helper: random sizes of a tiny model (2 heads, so an even H; E < H)."""
    H = 2 * int(rng.integers(2, 8))
    return dict(vocab_size=int(rng.integers(20, 200)), embedding_size=int(rng.integers(2, H)), hidden_size=H,
                intermediate_size=int(rng.integers(4, 40)), max_position_embeddings=int(rng.integers(8, 40)))


@case("ex06_task1")
def test_embedding_for_every_projection_rule_and_padding(counts, given):
    return {f"{name} pad {pad}": counts.embedding_parameters(tiny(vocab_size=given, **fields), pad_vocab_to=pad)
            for name, fields in EMBEDDING_VARIANTS.items() for pad in PADDINGS}


@test_embedding_for_every_projection_rule_and_padding.given
def _(rng):
    return 10 * int(rng.integers(2, 30))   # V: padded to 10 it stays; 64 and 128 are above it or not


@test_embedding_for_every_projection_rule_and_padding.judge
def _(out, ref, given):
    for name, fields in EMBEDDING_VARIANTS.items():
        E = fields.get("embedding_size", 6)
        projected = fields.get("embedding_projection", E != 8)
        for pad in PADDINGS:
            V = math.ceil(given / pad) * pad
            expected = (V + 16 + 2) * E + 2 * E + (E * 8 + 8 if projected else 0)
            assert out[f"{name} pad {pad}"] == expected, (name, pad, out[f"{name} pad {pad}"], expected)


@case("ex06_task2")
def test_sets_match_built_modules(counts, given):
    return [[counts.attention_set_parameters(tiny(hidden_size=H, intermediate_size=I)),
             counts.ffn_set_parameters(tiny(hidden_size=H, intermediate_size=I))] for H, I in given]


@test_sets_match_built_modules.given
def _(rng):
    return [[2 * int(rng.integers(2, 12)), int(rng.integers(4, 64))] for _ in range(3)]     # H, I


@test_sets_match_built_modules.judge
def _(out, ref, given):
    from minishare.nn import FFN, LayerNorm, MultiHeadAttention
    for (H, I), (attention, ffn) in zip(given, out):
        norm = minishare.count_parameters(LayerNorm(H))
        assert attention == minishare.count_parameters(MultiHeadAttention(H, 2)) + norm, (H, I, attention)
        assert ffn == minishare.count_parameters(FFN(H, I, "gelu")) + norm, (H, I, ffn)


@case("ex06_task3")
def test_table_4_every_variant(counts, given):
    return {f"{sharing} {E}": counts.albert_parameters(albert_base(embedding_size=E, sharing=sharing))
            for sharing in given for E in (768, 128)}


@test_table_4_every_variant.given
def _(rng):
    return list(TABLE_4)                 # the variants' names


@test_table_4_every_variant.judge
def _(out, ref):
    for sharing, (e768, e128) in TABLE_4.items():
        for E, millions in ((768, e768), (128, e128)):
            count = out[f"{sharing} {E}"]
            assert agrees_with_paper(count, millions, inconsistent=(E, sharing) == (768, "not-shared")), (sharing, E, count)


PLANS = {f"{sharing} {M} of {N}": dict(sharing=sharing, num_unique_layers=M, num_hidden_layers=N)
         for sharing, N, M in (("cycle", 6, 2), ("sequence", 6, 2), ("sequence", 6, 3), ("cycle-rev", 6, 3),
                               ("cycle", 7, 3), ("cycle-rev", 7, 3), ("cycle-rev-code", 7, 3),
                               ("cycle-rev-code", 8, 3), ("cycle", 5, 5), ("universal", 5, None))}
PLANS["explicit 2 and 3 sets"] = dict(sharing={"attention": [0, 0, 1, 1], "ffn": [0, 1, 2, 0]})
PLANS["explicit 1 and 4 sets"] = dict(sharing={"attention": [0, 0, 0, 0], "ffn": [3, 2, 1, 0]})


@case("ex06_task3")
def test_every_plan_counts_its_sets(counts, given):
    """Takase & Kiyono's strategies for M that divide N and M that do not, the Universal
    Transformer, and explicit schedules whose components have different numbers of sets."""
    return {name: counts.albert_parameters(tiny(**given, **fields)) for name, fields in PLANS.items()}


@test_every_plan_counts_its_sets.given
def _(rng):
    return tiny_sizes(rng)


@test_every_plan_counts_its_sets.judge
def _(out, ref, given):
    for name, fields in PLANS.items():
        expected = built({**given, **fields})
        assert out[name] == expected, (name, out[name], expected)


CONFIG_DETAILS = {"pre-LN": dict(norm_position="pre"), "pre-LN shared-ffn": dict(norm_position="pre", sharing="shared-ffn"),
                  "E = H": dict(embedding_size=8), "E = H, projection kept": dict(embedding_size=8, embedding_projection=True),
                  "no token types": dict(type_vocab_size=1)}


@case("ex06_task3")
def test_config_details_the_tables_do_not_show(counts):
    """Pre-LN's final LayerNorm, BERT's embedding with and without a kept projection, one token
    type."""
    return {name: counts.albert_parameters(tiny(**fields)) for name, fields in CONFIG_DETAILS.items()}


@test_config_details_the_tables_do_not_show.judge
def _(out, ref):
    for name, fields in CONFIG_DETAILS.items():
        assert out[name] == built(fields), (name, out[name], built(fields))


@case("ex06_task3")
def test_padded_vocabulary_in_the_whole_count(counts):
    """The padded table counts in the whole model: V = 50 padded to 64, and ALBERT-base's 30,000
    to 30,080 (128)."""
    return [counts.albert_parameters(tiny(sharing="not-shared"), pad_vocab_to=64),
            counts.albert_parameters(albert_base(), pad_vocab_to=128), counts.albert_parameters(albert_base())]


@test_padded_vocabulary_in_the_whole_count.judge
def _(out, ref):
    assert out[0] == built(dict(sharing="not-shared", vocab_size=64)), out[0]
    assert out[1] - out[2] == 80 * 128, (out[1], out[2])
    assert out[2] == minishare.count_parameters(albert_base()), out[2]
### END HIDDEN TESTS
