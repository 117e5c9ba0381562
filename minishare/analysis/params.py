"""Where the parameters go, each distinct tensor once, and the tables of the papers.

Counting itself is the kernel's (``minishare.params``: ``count_parameters``, each shared tensor
once, and ``build_shape_only``, a full-size model built without allocating its memory); this
module files the counted tensors under the groups and parts of a model, and compares the counts
with the papers' tables. ``count_parameters`` and ``build_shape_only`` are importable from here too.
"""
from minishare.nn import init
from minishare.params import build_shape_only, count_parameters  # noqa: F401 (re-exported)


# --- where the parameters go ------------------------------------------------------------------------
# (name prefix under AlbertModel, group, part). A parameter is filed under the first name it is
# reached by, so the tied MLM decoder weight, reached first as the word embedding, is counted there.
_PARTS = (
    ("embeddings.word_embeddings.", "embedding", "word (V × E)"),
    ("embeddings.position_embeddings.", "embedding", "position (P × E)"),
    ("embeddings.token_type_embeddings.", "embedding", "token type (2 × E)"),
    ("embeddings.LayerNorm.", "embedding", "LayerNorm (E)"),
    ("embeddings.embedding_hidden_mapping_in.", "embedding", "projection (E × H)"),
    ("encoder.attention_sets.", "encoder", "attention"),
    ("encoder.ffn_sets.", "encoder", "FFN"),
    ("encoder.final_norm.", "encoder", "final LayerNorm (Pre-LN)"),
    ("pooler.", "heads", "pooler (H × H)"),
    ("predictions.", "heads", "MLM head"),
    ("sop_classifier.", "heads", "SOP/NSP classifier"),
)
GROUPS = ("embedding", "encoder", "heads")


def parameter_breakdown(model_or_config):
    """Where the parameters of an ALBERT (or BERT) go: {group: {part: count}}, groups "embedding"
    (word, position, token type, LayerNorm, the E -> H projection), "encoder" (attention and FFN
    sets, each with its LayerNorm, and Pre-LN's final LayerNorm) and "heads" (pooler, MLM head,
    SOP/NSP classifier). Parts a model lacks (BERT's projection, Post-LN's final norm) are 0.

    Each distinct tensor is counted once, under the first name it is reached by, so the parts sum
    to ``count_parameters`` of the same model: a shared attention set counts once however many
    positions use it, and the tied MLM decoder weight counts as the word embedding. A config is
    built shape-only as ``AlbertForPreTraining`` (with its heads). Accepts ``AlbertModel``,
    ``AlbertForPreTraining`` or ``AlbertConfig``."""
    from minishare.models import AlbertConfig, AlbertForPreTraining, AlbertModel
    if isinstance(model_or_config, AlbertConfig):
        with init.shape_only():
            model_or_config = AlbertForPreTraining(model_or_config)
    if not isinstance(model_or_config, (AlbertModel, AlbertForPreTraining)):
        raise TypeError(f"parameter_breakdown needs an AlbertModel, AlbertForPreTraining or "
                        f"AlbertConfig, got {type(model_or_config).__name__}")
    result = {group: {part: 0 for prefix, g, part in _PARTS if g == group} for group in GROUPS}
    for name, p in model_or_config.named_parameters():
        name = name.removeprefix("albert.")                  # AlbertForPreTraining's encoder
        match = next(((g, part) for prefix, g, part in _PARTS if name.startswith(prefix)), None)
        if match is None:
            raise ValueError(f"parameter_breakdown: no part for parameter {name!r}")
        result[match[0]][match[1]] += p.size
    return result


# ALBERT (Lan et al., 2019) Tables 3 and 4: an ALBERT-base-shaped model (H = 768, N = 12).
PAPER_TABLE3 = {64: ("87M", "10M"), 128: ("89M", "12M"), 256: ("93M", "16M"), 768: ("108M", "31M")}
PAPER_TABLE4 = {"all-shared": ("31M", "12M"), "shared-attention": ("83M", "64M"),
                "shared-ffn": ("57M", "38M"), "not-shared": ("108M", "89M")}   # (E=768, E=128)


def albert_tables():
    """Rows (table, configuration, our exact count, the paper's rounded count) for ALBERT's
    Tables 1, 3 and 4."""
    from minishare.models import AlbertConfig
    from minishare.models.presets import PAPER_TABLE1
    rows = [("Table 1", name, count_parameters(AlbertConfig.from_preset(name)), paper)
            for name, paper in PAPER_TABLE1.items()]
    for E, papers in PAPER_TABLE3.items():
        for sharing, paper in zip(("not-shared", "all-shared"), papers):
            config = AlbertConfig.from_preset("albert-base", embedding_size=E, sharing=sharing)
            rows.append(("Table 3", f"E={E} {sharing}", count_parameters(config), paper))
    for sharing, papers in PAPER_TABLE4.items():
        for E, paper in zip((768, 128), papers):
            config = AlbertConfig.from_preset("albert-base", embedding_size=E, sharing=sharing)
            rows.append(("Table 4", f"E={E} {sharing}", count_parameters(config), paper))
    return rows


def preset_table():
    """(preset, count) for every preset, full-size ones counted shape-only."""
    from minishare.models import PRESETS, AlbertConfig
    return [(name, count_parameters(AlbertConfig.from_preset(name))) for name in PRESETS]


def format_table(rows, header):
    """Rows of values as an aligned Markdown table."""
    cells = [list(map(str, header))] + [[f"{v:,}" if isinstance(v, int) else str(v) for v in row]
                                        for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in cells]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)
