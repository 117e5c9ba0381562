"""Counting parameters, each distinct tensor once, and the tables of the papers.

Counting a model walks ``model.parameters()``, which yields a shared tensor once: the count is what
is stored and trained, not what is computed with. Full-size presets are counted by building the
real model under ``nn.init.shape_only()``, so the same tensors are counted (no separate formula
that could drift from the code) without allocating their memory.
"""
from minishare.nn import Module, init


def count_parameters(model_or_config):
    """Number of trainable numbers, each shared tensor counted once. Accepts a Module, or a config
    (AlbertConfig: the encoder with its pooler, as the papers count; TransformerConfig: the
    encoder-decoder), which is then built shape-only."""
    model = model_or_config if isinstance(model_or_config, Module) else build_shape_only(model_or_config)
    return sum(p.size for p in model.parameters())


def build_shape_only(config):
    from minishare.models import AlbertConfig, AlbertModel, EncoderDecoderModel, TransformerConfig
    with init.shape_only():
        if isinstance(config, AlbertConfig):
            return AlbertModel(config)
        if isinstance(config, TransformerConfig):
            return EncoderDecoderModel(config)
    raise TypeError(f"count_parameters needs a Module, AlbertConfig or TransformerConfig, got "
                    f"{type(config).__name__}")


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
