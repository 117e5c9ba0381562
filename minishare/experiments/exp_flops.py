"""Experiment "flops": compute per token beside parameters. FLOPs per token of the presets (ALBERT
Table 1's models), computed from their configurations, against their parameter counts; and a check
of the FLOP model at small scale: tiny ALBERTs of different FLOPs are timed back to back, and their
step-time ratios are set beside their FLOP ratios."""
import statistics

import numpy   # host-side synthetic batch

from minishare import optim, random as ms_random
from minishare.analysis import flops, flops_figure, memory
from minishare.analysis.figure_style import save_figure
from minishare.experiments import book_cells as cells, stats
from minishare.models import AlbertConfig, AlbertForPreTraining

NAME = "flops"
TITLE = "FLOPs per token beside parameters"
ORDER = 120
READS = ("flops_batch", "flops_models", "seq_len", "timing_repeats", "vocab_size")

PAPER_SEQ_LEN = 512     # ALBERT and BERT pre-train on sequences of 512 tokens


def _tiny(settings, H, N):
    """albert-tiny with width H, N positions, heads of 64 (at least 1), FFN 4H, E = 32."""
    return AlbertConfig.from_preset("albert-tiny", vocab_size=settings.vocab_size, hidden_size=H,
                                    embedding_size=32, num_attention_heads=max(1, H // 64),
                                    intermediate_size=4 * H, num_hidden_layers=N,
                                    max_position_embeddings=max(128, settings.seq_len))


def _setup(config, settings):
    ms_random.manual_seed(0)
    model = AlbertForPreTraining(config)
    rng = numpy.random.default_rng(0)
    B, T, V = settings.flops_batch, settings.seq_len, config.vocab_size
    ids = rng.integers(5, V, (B, T))
    batch = dict(input_ids=ids, labels=numpy.where(rng.random((B, T)) < 0.15, ids, -100),
                 sentence_order_label=rng.integers(0, 2, B))
    return model, (lambda m: m(**batch).loss), optim.AdamW(model.parameters(), lr=1e-3)


def run(out, settings, progress=True):
    presets = flops.preset_table(seq_len=PAPER_SEQ_LEN)
    tokens = settings.flops_batch * settings.seq_len
    configs = {f"H={H}, N={N}": _tiny(settings, H, N) for H, N in settings.flops_models}
    times = memory.interleaved_step_times({name: _setup(c, settings) for name, c in configs.items()},
                                          repeats=settings.timing_repeats, warmup=1)
    check, previous = [], None
    for name, config in configs.items():
        row = {"name": name, "hidden_size": config.hidden_size, "layers": config.num_hidden_layers,
               "step_gflops": flops.flops_per_token(config, settings.seq_len, training=True) * tokens / 1e9,
               "cpu_s": stats.spread(times[name]["cpu"]), "wall_s": stats.spread(times[name]["wall"])}
        row["gflops_per_cpu_s"] = row["step_gflops"] / statistics.median(times[name]["cpu"])
        if previous is not None:     # each model against the one before it, within each round
            row.update(against=previous["name"], flop_ratio=row["step_gflops"] / previous["step_gflops"],
                       cpu_ratio=stats.spread(memory.paired_ratios(times, name, previous["name"], "cpu")),
                       wall_ratio=stats.spread(memory.paired_ratios(times, name, previous["name"], "wall")))
        check.append(row)
        previous = row
    return {"seq_len": PAPER_SEQ_LEN, "presets": presets, "check": check,
            "check_batch": [settings.flops_batch, settings.seq_len], "repeats": settings.timing_repeats}


def figures(result, folder):
    return [("Forward FLOPs per token against parameters for ALBERT Table 1's models (T = 512; "
             "FLOPs = 2 × multiply-accumulates of the matrix products), and measured training-step "
             "time against FLOPs for tiny ALBERTs",
             save_figure(flops_figure.plot_flops(result["presets"], result["check"], result["seq_len"],
                                                 result["check_batch"]), f"{folder}/flops"))]


def report(result, figs):
    rows = [(r["name"], f"{r['parameters'] / 1e6:.1f}M", f"{r['params_vs_bert-large']:.2f}",
             f"{r['forward_gflops']:.3f}", f"{r['training_gflops']:.3f}", f"{r['flops_vs_bert-large']:.2f}")
            for r in result["presets"]]
    B, T = result["check_batch"]
    check = [(r["name"], f"{r['step_gflops']:.2f}", stats.fmt(r["cpu_s"], 3), f"{r['gflops_per_cpu_s']:.1f}",
              r.get("against", "-"), f"{r['flop_ratio']:.2f}" if "against" in r else "-",
              stats.fmt(r["cpu_ratio"], 2) if "against" in r else "-",
              stats.fmt(r["wall_ratio"], 2) if "against" in r else "-")
             for r in result["check"]]
    return "\n".join([
        "FLOPs per token computed from each configuration (`minishare.analysis.flops`): matrix "
        "products only (LayerNorm, softmax, GELU, biases and lookups are O(H) per token and left "
        "out); a multiply-accumulate is 2 FLOPs; a training step is taken as 3 × the forward pass "
        "(backward runs two products per forward one). Sharing does not enter: every one of the N "
        f"positions computes. Sequence length T = {result['seq_len']}; ratios are to BERT-large.", "",
        _table(rows, ["model", "parameters", "params / BERT-large", "forward GFLOPs/token",
                      "training GFLOPs/token", "FLOPs / BERT-large"]), "",
        f"The FLOP model at small scale: tiny ALBERTs (E = 32, FFN 4H, V = 1,000; batch {B} × {T} "
        f"tokens) trained step by step back to back, {result['repeats']} rounds (the order reversed "
        "every other round); each model is compared with the one above it, its time ratio taken "
        "within a round"
        " (mean ± std (min–max) over rounds). CPU time is this process's; wall time includes "
        "waiting for other processes on the machine.", "",
        _table(check, ["model", "training GFLOP/step", "CPU s/step", "GFLOP per CPU-s", "against",
                       "FLOP ratio", "CPU-time ratio", "wall-time ratio"]),
    ])


def _table(rows, header):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(map(str, r)) + " |" for r in rows])


def observations(result):
    rows = {r["name"]: r for r in result["presets"]}
    xx, large = rows["albert-xxlarge"], rows["bert-large"]
    notes = [f"ALBERT-xxlarge has {xx['params_vs_bert-large']:.2f}× BERT-large's parameters "
             f"({xx['parameters'] / 1e6:.1f}M against {large['parameters'] / 1e6:.1f}M) and "
             f"{xx['flops_vs_bert-large']:.1f}× its FLOPs per token ({xx['forward_gflops']:.2f} against "
             f"{large['forward_gflops']:.2f} forward GFLOPs at T = {result['seq_len']}): fewer parameters, "
             "far more compute. The paper reports xxlarge about 3× slower to train than BERT-large, "
             f"less than the FLOP ratio: if its speeds compare equal batches on equal hardware (the "
             f"paper's setup, not checkable here), xxlarge ran at about "
             f"{xx['flops_vs_bert-large'] / 3:.1f}× BERT-large's FLOP rate."]
    for r in result["check"][1:]:
        inside = r["cpu_ratio"]["min"] <= r["flop_ratio"] <= r["cpu_ratio"]["max"]
        notes.append(f"{r['name']} against {r['against']}: {r['flop_ratio']:.2f}× the FLOPs, "
                     f"{stats.fmt(r['cpu_ratio'], 2)}× the CPU time per training step over "
                     f"{r['cpu_ratio']['n']} rounds (time ratio / FLOP ratio = "
                     f"{r['cpu_ratio']['mean'] / r['flop_ratio']:.2f}): the FLOP ratio lies "
                     + ("within the measured range." if inside else
                        f"outside the measured range (this engine runs {r['gflops_per_cpu_s']:.1f} "
                        f"GFLOP per CPU-second on {r['name']} against "
                        f"{_check_rows(result)[r['against']]['gflops_per_cpu_s']:.1f} on {r['against']})."))
    return notes


def _check_rows(result):
    return {r["name"]: r for r in result["check"]}


# --- the book's table ---------------------------------------------------------------------------------
def book_rows(settings, said):
    """The chapter's table, row by row: (claim, what the paper reports, what this run measured)."""
    def row(name, key):
        def f(r):
            p = next(p for p in cells.get(r, "presets") if p["name"] == name)
            return key(p)
        return f
    return [
        ("ALBERT-xxlarge has fewer parameters than BERT-large", "235M against 334M (Table 1)",
         row("albert-xxlarge", lambda p: f"{p['parameters']:,} counted, {p['params_vs_bert-large']:.2f}× BERT-large")),
        ("… and computes more per token", "about 3× slower to train (Sec. 4.3)",
         row("albert-xxlarge", lambda p: f"{p['forward_gflops']:.2f} GFLOPs per token forward, "
                                         f"{p['flops_vs_bert-large']:.2f}× BERT-large (T = 512)")),
    ]
