"""Where the parameters go (``params.parameter_breakdown``): the parts sum to the identity-deduplicated
count, and each big part equals its closed form written out here (V × E for the word table, etc.)."""
import pytest

from minishare.analysis import count_parameters
from minishare.analysis.params import parameter_breakdown
from minishare.models import AlbertConfig, AlbertForPreTraining, AlbertModel


def total(breakdown):
    return sum(n for parts in breakdown.values() for n in parts.values())


def closed_form(V, E, H, I, N_attention, N_ffn, P=512, types=2):
    """Each part of an ALBERT/BERT with its heads (Lan et al., 2019, Sec. 3.1; the reference layout)."""
    return {
        "embedding": {"word (V × E)": V * E, "position (P × E)": P * E, "token type (2 × E)": types * E,
                      "LayerNorm (E)": 2 * E, "projection (E × H)": E * H + H if E != H else 0},
        "encoder": {"attention": N_attention * (4 * (H * H + H) + 2 * H),     # Q, K, V, output + LN
                    "FFN": N_ffn * (H * I + I + I * H + H + 2 * H),            # H -> I -> H + LN
                    "final LayerNorm (Pre-LN)": 0},
        "heads": {"pooler (H × H)": H * H + H,
                  "MLM head": H * E + E + 2 * E + V,      # dense H -> E, LayerNorm(E), output bias
                  "SOP/NSP classifier": 2 * H + 2},
    }


@pytest.mark.parametrize("name, N_sets", [("bert-base", 12), ("albert-base", 1)])
def test_presets_break_down_as_the_closed_form(name, N_sets):
    c = AlbertConfig.from_preset(name)
    got = parameter_breakdown(c)
    assert got == closed_form(c.vocab_size, c.embedding_size, c.hidden_size, c.intermediate_size,
                              N_sets, N_sets)
    # BERT-base: 23.04M of its word table alone (30,000 × 768); ALBERT-base: 3.84M (30,000 × 128)
    assert got["embedding"]["word (V × E)"] == 30000 * (768 if name == "bert-base" else 128)


def tiny(**overrides):
    return AlbertConfig(**{**dict(vocab_size=11, embedding_size=4, hidden_size=8, num_hidden_layers=4,
                                  num_attention_heads=2, intermediate_size=16, max_position_embeddings=8),
                           **overrides})


@pytest.mark.parametrize("overrides, sets", [
    (dict(sharing="not-shared"), (4, 4)), (dict(sharing="shared-attention"), (1, 4)),
    (dict(sharing="cycle-rev", num_unique_layers=3), (3, 3)),
    (dict(sharing="all-shared", norm_position="pre"), (1, 1)),
])
def test_parts_sum_to_the_deduplicated_count(overrides, sets):
    model = AlbertForPreTraining(tiny(**overrides))
    got = parameter_breakdown(model)
    assert total(got) == count_parameters(model)
    expected = closed_form(11, 4, 8, 16, *sets, P=8)
    if overrides.get("norm_position") == "pre":
        expected["encoder"]["final LayerNorm (Pre-LN)"] = 2 * 8
    assert got == expected
    # the encoder alone (AlbertModel) has only the pooler among the heads
    encoder_only = parameter_breakdown(AlbertModel(tiny(**overrides)))
    assert total(encoder_only) == count_parameters(tiny(**overrides))
    assert encoder_only["heads"] == {"pooler (H × H)": 8 * 8 + 8, "MLM head": 0, "SOP/NSP classifier": 0}


def test_untied_decoder_is_part_of_the_mlm_head():
    got = parameter_breakdown(AlbertForPreTraining(tiny(tie_word_embeddings=False)))
    assert got["heads"]["MLM head"] == 8 * 4 + 4 + 2 * 4 + 11 + 11 * 4      # + its own V × E table
    assert got["embedding"]["word (V × E)"] == 11 * 4


def test_breakdown_refuses_other_models():
    from minishare.models import TransformerConfig
    with pytest.raises(TypeError, match="parameter_breakdown needs"):
        parameter_breakdown(TransformerConfig())
