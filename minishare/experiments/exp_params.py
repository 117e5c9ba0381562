"""Experiment "params": parameter counts. ALBERT's Tables 1, 3 and 4 (our exact counts beside the
paper's rounded ones), where the parameters of BERT-base and ALBERT-base go (embedding, encoder,
heads), Takase & Kiyono's configurations, and parameters as a function of the embedding size E and
of the depth N, shared against not shared. No training."""
from minishare.analysis import params, params_figures
from minishare.analysis.figure_style import save_figure
from minishare.experiments.takase_arms import universal_hidden_size
from minishare.models import AlbertConfig, TransformerConfig
from minishare.experiments import book_cells as cells

NAME = "params"
TITLE = "Parameter counts"
ORDER = 10
READS = ()

# Takase & Kiyono's WMT En-De models are Transformer (base): H = 512, FFN 2048, 8 heads, one
# embedding shared by source, target and output. The paper does not print V; with V = 32,000 the
# Vanilla model has 61M parameters, the paper's figure. Their table, as printed:
TAKASE_PAPER = {"Vanilla 6/6": "61M", "Universal 1/6": "63M", "Sequence 6/12": "61M",
                "Cycle 6/12": "61M", "Cycle (rev) 6/12": "61M", "Sequence 6/18": "61M",
                "Cycle 6/18": "61M", "Cycle (rev) 6/18": "61M"}
TAKASE_BASE = dict(vocab_size=32000, hidden_size=512, num_attention_heads=8, intermediate_size=2048,
                   norm_position="post", max_position_embeddings=1024)


def takase_rows():
    """Takase & Kiyono's WMT configurations counted. The Universal model widens its whole layer to
    Vanilla's budget (H, FFN 4H, E = H), the rule the ``takase`` experiment trains with
    (``takase_arms.universal_hidden_size``); returns (rows, the Universal model's H)."""
    vanilla_config = TransformerConfig(**TAKASE_BASE, num_hidden_layers=6)
    H = universal_hidden_size(vanilla_config, params.count_parameters(vanilla_config))
    configs = {"Vanilla 6/6": dict(num_hidden_layers=6),
               "Universal 1/6": dict(num_hidden_layers=6, sharing="universal", hidden_size=H,
                                     intermediate_size=4 * H)}
    for N in (12, 18):
        for name, strategy in (("Sequence", "sequence"), ("Cycle", "cycle"), ("Cycle (rev)", "cycle-rev")):
            configs[f"{name} 6/{N}"] = dict(num_hidden_layers=N, sharing=strategy, num_unique_layers=6)
    return [(name, params.count_parameters(TransformerConfig(**{**TAKASE_BASE, **c})), TAKASE_PAPER[name])
            for name, c in configs.items()], H


BREAKDOWN_MODELS = ("bert-base", "albert-base")


def run(out, settings, progress=True):
    takase, universal_H = takase_rows()
    E_values = [32, 64, 128, 256, 512, 768]
    depths = [1, 2, 4, 6, 8, 12, 16, 24]
    base = AlbertConfig.from_preset("albert-base")

    def count(**fields):
        return params.count_parameters(AlbertConfig(**{**base.to_dict(), **fields}))
    return {
        "albert": params.albert_tables(),
        "presets": params.preset_table(),
        "breakdown": {name: params.parameter_breakdown(AlbertConfig.from_preset(name))
                      for name in BREAKDOWN_MODELS},
        "takase": takase, "universal_hidden_size": universal_H,
        "vs_E": {"E": E_values,
                 "not-shared": [count(embedding_size=E, sharing="not-shared") for E in E_values],
                 "all-shared": [count(embedding_size=E, sharing="all-shared") for E in E_values]},
        "vs_depth": {"N": depths,
                     "not-shared": [count(num_hidden_layers=N, sharing="not-shared") for N in depths],
                     "all-shared": [count(num_hidden_layers=N, sharing="all-shared") for N in depths]},
    }


def figures(result, folder):
    table1 = [row for row in result["albert"] if row[0] == "Table 1"]
    return [
        ("ALBERT Table 1: parameters of BERT and ALBERT, ours beside the paper's",
         save_figure(params_figures.plot_param_bars([(r[1], r[2], r[3]) for r in table1],
                                                    "ALBERT Table 1: parameters (V = 30,000)"),
                     f"{folder}/params_table1")),
        ("Where the parameters of BERT-base and ALBERT-base go (with the pre-training heads; the "
         "tied MLM output weight is counted once, as the word embedding)",
         save_figure(params_figures.plot_param_breakdown(
             result["breakdown"], "Where the parameters go: BERT-base (E = H = 768, not shared) vs\n"
                                  "ALBERT-base (E = 128, all-shared); V = 30,000, N = 12, H = 768, Post-LN"),
             f"{folder}/params_breakdown")),
        ("Takase & Kiyono: parameters of each configuration (M/N)",
         save_figure(params_figures.plot_param_bars(result["takase"], "Takase & Kiyono: parameters (WMT base)"),
                     f"{folder}/params_takase")),
        ("Parameters against the embedding size E (ALBERT-base shape)",
         save_figure(params_figures.plot_params_vs(result["vs_E"]["E"], {k: v for k, v in result["vs_E"].items() if k != "E"},
                                                   "embedding size E", "Parameters vs E (H = 768, N = 12)"),
                     f"{folder}/params_vs_E")),
        ("Parameters against the depth N (ALBERT-base shape, E = 128)",
         save_figure(params_figures.plot_params_vs(result["vs_depth"]["N"], {k: v for k, v in result["vs_depth"].items() if k != "N"},
                                                   "layer positions N", "Parameters vs depth (H = 768, E = 128)"),
                     f"{folder}/params_vs_depth")),
    ]


def _breakdown_rows(breakdowns):
    """(group, part, "count (percent)" per model) rows, then the totals."""
    totals = {m: sum(n for g in b.values() for n in g.values()) for m, b in breakdowns.items()}
    first = next(iter(breakdowns.values()))
    rows = [(group, part, *(f"{b[group][part]:,} ({100 * b[group][part] / totals[m]:.1f}%)"
                           for m, b in breakdowns.items()))
            for group in first for part in first[group]]
    return rows + [("total", "", *(f"{t:,}" for t in totals.values()))]


def _xxlarge_note(result):
    """Why our ALBERT-xxlarge count is not the paper's (the paper gives two figures), and which
    other rows the paper's rounding does not explain."""
    ours = next(count for table, name, count, _ in result["albert"] if name == "albert-xxlarge")
    off = [f"{table} {name} ({count / 1e6:.1f}M printed {paper})"
           for table, name, count, paper in result["albert"]
           if int(paper[:-1]) not in (round(count / 1e6), count // 10 ** 6)]
    return (f"ALBERT-xxlarge: we count {ours:,} ({ours / 1e6:.1f}M); the paper prints 235M in Table 1 "
            "and 233M in Sec. 3.2, so it disagrees with itself, and neither figure follows from its "
            "architecture (V = 30,000, E = 128, H = 4,096, FFN 16,384, 12 layers, all-shared, with the "
            "pooler). Our count is computed from the built model, equals the closed form written out "
            "in tests/test_params.py, and equals the count of Hugging Face's AlbertModel for "
            "albert-xxlarge-v2 (222,595,584, the reference count in the same test). Rows whose "
            "printed figure is neither our count rounded nor truncated to the million: "
            + "; ".join(off) + ".")


def report(result, figs):
    lines = ["ALBERT (Lan et al., 2019), V = 30,000, counted as the reference implementation counts "
             "(encoder with pooler). Each shared tensor is counted once; full-size models are "
             "built shape-only, so nothing is allocated.", "",
             params.format_table(result["albert"], ["table", "configuration", "ours", "paper"]), "",
             _xxlarge_note(result), "",
             "Where the parameters go, with the pre-training heads (MLM head and SOP/NSP "
             "classifier; the paper's counts stop at the pooler). Each distinct tensor is counted "
             "once: ALBERT-base's 12 positions use one attention and one FFN set, and the MLM output "
             "layer is the word-embedding table (tied), counted under the embedding.", "",
             params.format_table(_breakdown_rows(result["breakdown"]),
                                 ["group", "part"] + [f"{m} (share)" for m in result["breakdown"]]), "",
             f"Takase & Kiyono (2021), Transformer (base) with V = 32,000 (our assumption: the paper "
             f"does not print V). The Universal model is one layer widened as a whole (H = "
             f"{result['universal_hidden_size']:,}, FFN 4H, E = H) to Vanilla's budget; the paper's 63M "
             "against 61M fits d = 1,024, d_ff = 4,096.", "",
             params.format_table(result["takase"], ["configuration (M/N)", "ours", "paper"]), ""]
    return "\n".join(lines)


# --- the book's tables ---------------------------------------------------------------------------------
BOOK_TABLES = ("params_table1", "params_table34", "params_takase")


def book_tables(result, settings, said):
    """Chapters 3 and 4's counts beside ALBERT's Tables 1, 3 and 4, and chapter 5's beside Takase &
    Kiyono's: what the paper reports against what this library counts."""
    counted = cells.source_line(NAME, settings, counted=True)
    return {"params_table1": _albert_table(result, ("Table 1",), counted),
            "params_table34": _albert_table(result, ("Table 3", "Table 4"), counted),
            "params_takase": cells.markdown_table(
                ("configuration (M/N)", "the paper reports", "we count"),
                [(r[0], r[2], cells.cell(lambda r=r: cells.num(r[1]))) for r in result.get("takase", [])])
            + "\n\n" + counted + " Transformer (base) with V = 32,000 (the paper does not print V).\n"}


def _albert_table(result, which, counted):
    rows = [r for r in result.get("albert", []) if r[0] in which]
    label = (lambda r: f"{r[0]}: {r[1]}") if "Table 3" in which or "Table 4" in which else (lambda r: r[1])
    return cells.markdown_table(("configuration", "the paper reports", "we count"),
                                [(label(r), r[3], cells.cell(lambda r=r: cells.num(r[2]))) for r in rows]) + \
        "\n\n" + counted + " Counted as the reference implementation counts: each shared tensor once, the pooler included.\n"

