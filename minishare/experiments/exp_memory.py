"""Experiment "memory": what sharing saves and what it does not. For ALBERT's four variants, the
bytes of parameters, gradients, optimizer state and activations of one training step; then
training-step and inference time against depth, shared against not shared, timed back to back
(one step of each in turn, over several rounds), and a profile of where a training step's time
goes. Sharing shrinks the first three (they scale with the number of distinct tensors), not the
activations (they scale with the number of positions computed)."""
import statistics

import numpy   # host-side synthetic batch

from minishare import optim, random as ms_random
from minishare.analysis import count_parameters, memory, memory_figures
from minishare.analysis.figure_style import save_figure
from minishare.experiments import book_cells as cells, claims as ledger, stats
from minishare.models import AlbertConfig, AlbertForPreTraining

NAME = "memory"
TITLE = "Memory and time: sharing saves memory, not compute"
ORDER = 110
READS = ("batch_size", "depths", "seq_len", "timing_repeats", "vocab_size")

VARIANTS = ("not-shared", "all-shared", "shared-attention", "shared-ffn")
PAIR = ("all-shared", "not-shared")        # the timed comparison: numerator, denominator


def _batch(config, settings, seed=0):
    """A random pre-training batch: memory and time do not depend on what the tokens say."""
    rng = numpy.random.default_rng(seed)
    B, T, V = settings.batch_size, settings.seq_len, config.vocab_size
    ids = rng.integers(5, V, (B, T))
    return dict(input_ids=ids, attention_mask=numpy.ones((B, T), dtype=numpy.int64),
                token_type_ids=numpy.zeros((B, T), dtype=numpy.int64),
                labels=numpy.where(rng.random((B, T)) < 0.15, ids, -100),
                sentence_order_label=rng.integers(0, 2, B))


def _config(settings, **fields):
    """The albert-tiny preset as it is (H = 128, E = 32, FFN 512, 2 heads): the model on which
    an earlier version of this experiment measured all-shared steps 13–14% slower."""
    base = dict(vocab_size=settings.vocab_size, max_position_embeddings=max(128, settings.seq_len))
    return AlbertConfig.from_preset("albert-tiny", **{**base, **fields})


def _setup(config, settings):
    ms_random.manual_seed(0)
    model = AlbertForPreTraining(config)
    batch = _batch(config, settings)
    return model, (lambda m: m(**batch).loss), optim.AdamW(model.parameters(), lr=1e-3)


def run(out, settings, progress=True):
    setups = {name: _setup(_config(settings, sharing=name), settings) for name in VARIANTS}
    variants = {name: {"params": count_parameters(model),
                       "bytes": memory.memory_breakdown(model, optimizer, loss_fn)}
                for name, (model, loss_fn, optimizer) in setups.items()}
    variant_times = memory.interleaved_step_times(setups, repeats=settings.timing_repeats)

    def make_model(N, sharing):
        return _setup(_config(settings, sharing=sharing, num_hidden_layers=N), settings)[0]
    loss_fn = _setup(_config(settings), settings)[1]       # the same batch for every model
    sweep = memory.depth_sweep(make_model, list(settings.depths), loss_fn, sharings=PAIR[::-1],
                               repeats=settings.timing_repeats)
    deepest = max(settings.depths)
    profile = {name: memory.profile_step(*_setup(_config(settings, sharing=name, num_hidden_layers=deepest),
                                                 settings))
               for name in PAIR}
    shape = {k: v for k, v in _config(settings).to_dict().items()
             if k in ("hidden_size", "embedding_size", "intermediate_size", "num_attention_heads")}
    return {"model": shape, "batch": [settings.batch_size, settings.seq_len],
            "variants": variants, "variant_times": variant_times, "depths": list(settings.depths),
            "sweep": sweep,
            "profile": profile, "profile_depth": deepest, "repeats": settings.timing_repeats}


def _ratios(result, i, mode, clock="cpu"):
    """all-shared / not-shared time at depth index ``i``, per round."""
    times = {s: result["sweep"][s][i]["times"][mode] for s in PAIR}
    return memory.paired_ratios(times, *PAIR, clock)


def figures(result, folder):
    rows = [(name, r["bytes"]) for name, r in result["variants"].items()]
    def entry(row):
        cpu = {mode: row["times"][mode]["cpu"] for mode in ("train", "inference")}
        return {**{mode: statistics.median(v) for mode, v in cpu.items()},
                **{f"{mode}_range": (min(v), max(v)) for mode, v in cpu.items()}}
    series = {name: [entry(row) for row in rows_] for name, rows_ in result["sweep"].items()}
    return [
        ("Bytes of one training step by kind: sharing shrinks parameters, gradients and optimizer state",
         save_figure(memory_figures.plot_memory(rows), f"{folder}/memory")),
        ("Training-step and inference CPU time against depth (albert-tiny, H = 128, Post-LN), shared "
         "against not shared, timed back to back (median, band min–max over rounds)",
         save_figure(memory_figures.plot_step_time(result["depths"], series,
                                                   ylabel="CPU seconds (median; band: min–max over rounds)"),
                     f"{folder}/time_vs_depth")),
    ]


def _mib(n):
    return f"{n / 2 ** 20:.2f}"


def report(result, figs):
    kinds = ("parameters", "gradients", "optimizer", "activations")
    n = result["repeats"]
    vt = result["variant_times"]
    m, (B, T) = result["model"], result["batch"]
    lines = [f"ALBERT (albert-tiny: H = {m['hidden_size']}, E = {m['embedding_size']}, FFN "
             f"{m['intermediate_size']}, {m['num_attention_heads']} heads, Post-LN), one fixed random "
             f"batch of {B} × {T} tokens, AdamW. "
             f"Times are CPU seconds of this process per step (median over {n} rounds; each round runs "
             "one step of every compared model in turn, the order reversed every other round). Ratios "
             "are taken within a round and given as mean ± std (min–max) over the rounds.", "",
             "| variant | parameters | " + " | ".join(f"{k} (MiB)" for k in kinds) +
             " | step CPU s | step / not-shared |", "|---" * (len(kinds) + 4) + "|"]
    for name, r in result["variants"].items():
        ratio = stats.fmt(stats.spread(memory.paired_ratios(vt, name, "not-shared")), 2)
        lines.append(f"| {name} | {r['params']:,} | " + " | ".join(_mib(r["bytes"][k]) for k in kinds) +
                     f" | {statistics.median(vt[name]['cpu']):.3f} | {ratio} |")
    lines += ["", "| N | mode | not-shared CPU s | all-shared CPU s | all-shared / not-shared (CPU) | "
                  "all-shared / not-shared (wall) |", "|---|---|---|---|---|---|"]
    for i, N in enumerate(result["depths"]):
        for mode in ("train", "inference"):
            med = {s: statistics.median(result["sweep"][s][i]["times"][mode]["cpu"]) for s in PAIR}
            lines.append(f"| {N} | {mode} | {med['not-shared']:.3f} | {med['all-shared']:.3f} | "
                         f"{stats.fmt(stats.spread(_ratios(result, i, mode)), 3)} | "
                         f"{stats.fmt(stats.spread(_ratios(result, i, mode, 'wall')), 3)} |")
    p, N = result["profile"], result["profile_depth"]
    lines += ["", f"Where a training step's time goes at N = {N} (Python's profiler, CPU seconds per step; "
                  "the profiler slows Python calls, so read the parts as shares of the total):", "",
              "| model | total | sum rule (autograd.accumulate) | optimizer.step |", "|---|---|---|---|"]
    for name in PAIR[::-1]:
        lines.append(f"| {name} | {p[name]['total']:.3f} | {p[name]['accumulate']:.3f} "
                     f"({100 * p[name]['accumulate'] / p[name]['total']:.1f}%) | {p[name]['optimizer']:.3f} "
                     f"({100 * p[name]['optimizer'] / p[name]['total']:.1f}%) |")
    return "\n".join(lines)


def observations(result):
    v = result["variants"]
    ns, sh = v["not-shared"], v["all-shared"]
    notes = [f"all-shared keeps {ns['bytes']['parameters'] / sh['bytes']['parameters']:.1f}× fewer parameter "
             f"bytes and {ns['bytes']['optimizer'] / max(sh['bytes']['optimizer'], 1):.1f}× less optimizer state "
             f"than not-shared, and {sh['bytes']['activations'] / ns['bytes']['activations']:.2f}× the "
             "activations (counted bytes, not timed: no spread)."]
    p, N = result["profile"], result["profile_depth"]
    notes.append(f"At N = {N}, the sum rule (adding each use's gradient into a shared tensor's) takes "
                 f"{100 * p['all-shared']['accumulate'] / p['all-shared']['total']:.1f}% of a profiled "
                 f"all-shared step against {100 * p['not-shared']['accumulate'] / p['not-shared']['total']:.1f}% "
                 f"not shared, and the optimizer {100 * p['all-shared']['optimizer'] / p['all-shared']['total']:.1f}% "
                 f"against {100 * p['not-shared']['optimizer'] / p['not-shared']['total']:.1f}%: "
                 "one profiled run each, no spread.")
    return notes


def claims(result, seeds):
    """All-shared against not-shared step CPU time at every depth, paired by round (each round
    times one step of both in turn): sharing saves memory, not compute."""
    out = []
    for i, N in enumerate(result["depths"]):
        for mode in ("train", "inference"):
            a = result["sweep"]["all-shared"][i]["times"][mode]["cpu"]
            b = result["sweep"]["not-shared"][i]["times"][mode]["cpu"]
            out.append(ledger.compare(
                f"memory.time_{mode}_N{N}", "memory", f"CPU seconds per {'training step' if mode == 'train' else 'inference step'}"
                f" at N = {N}, all-shared against not-shared", f"{mode}_cpu_s", "lower", "all-shared", "not-shared",
                list(range(len(a))), a, b, "no faster: every position still runs (Lan et al., 2019, Sec. 4.3)",
                False, digits=4, unit=" s", over="rounds", says="is faster"))
    return out


# --- the book's table ---------------------------------------------------------------------------------
def book_rows(settings, said):
    """The chapter's table, row by row: (claim, what the paper reports, what this run measured)."""
    def ratio(kind):
        return lambda r: (f"all-shared / not-shared = "
                          f"{cells.get(r, 'variants', 'all-shared', 'bytes', kind) / cells.get(r, 'variants', 'not-shared', 'bytes', kind):.2f} "
                          f"({cells.get(r, 'variants', 'all-shared', 'bytes', kind):,} / "
                          f"{cells.get(r, 'variants', 'not-shared', 'bytes', kind):,} bytes)")

    def time_ratio(r):
        deepest = len(cells.get(r, "sweep", "not-shared")) - 1
        a, b = cells.get(r, "sweep", "all-shared", deepest), cells.get(r, "sweep", "not-shared", deepest)
        return (f"training step at N = {cells.get(r, 'depths', deepest)}: all-shared / not-shared = "
                f"{cells.get(a, 'train') / cells.get(b, 'train'):.2f} (median seconds {cells.get(a, 'train'):.4f} / "
                f"{cells.get(b, 'train'):.4f})")
    return [
        ("sharing shrinks the parameters", "by the number of positions per set (Lan et al., 2019, Sec. 3.1)",
         ratio("parameters")),
        ("… and the optimizer state with them", "fewer parameters, less state and communication (Lan et al., 2019)", ratio("optimizer")),
        ("the activations stay", "every position still runs (Sec. 4.3: no faster)", ratio("activations")),
        ("the time stays", "ALBERT-xxlarge about 3× slower than BERT-large (Sec. 4.3)", time_ratio),
    ]
