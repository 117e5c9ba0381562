"""Experiment "golf": the class competition's reference entries (``minishare.golf``). Which design
buys the lowest held-out bits per byte in the byte budget, and what storing the weights at int8
does to a shared stack against a not-shared one.

Four designs, each an entry the grader runs (``DESIGNS``), on the grammar corpus, V = 256, tied
embeddings, Pre-LN, AdamW at 3e-3 with a cosine schedule:

- not-shared: two layers of H = 48 (the course's baseline at the budget);
- ALBERT-style (Lan et al., 2020): a factorized embedding (E = 32 < H = 64) and one layer shared by
  all four positions;
- looped (Dehghani et al.'s Universal Transformer; Yang et al., 2023): one layer of H = 64 trained
  at a depth drawn at every step with mean two (Geiping et al., 2025's draw, as chapter 14's looped
  models train) and scored at ``test_iterations``, the same stored tensors. The scoring depth was
  chosen on tuning seeds (``plan.json``), never on the evaluation seeds;
- relaxed (Bae et al., 2024): one layer of H = 56 shared by four positions, each with a LoRA
  correction of rank 4 on every Linear (``relaxation_rank``), trained from scratch.

Each design trains once per seed, for a fixed number of steps chosen so that its training takes
about 80 CPU-seconds on one core (``TIERS``: fewer than the competition's 5-minute limit, so that
the five seeds of all four run in some 25 CPU-minutes; the measured seconds are in the result), and
the one trained model is scored twice on the hidden test split: as trained (float32) and stored at int8 with a
scale per row (``golf.quantize``). The quick tier trains each for a few steps: a smoke test of the
pipeline, not a measurement. Beside the models, the no-model baselines: unigram and bigram counts
of the training split's tokens, scored on the test split (``analysis.golf_baselines``).
"""
import dataclasses
import json
import os

from minishare.analysis import golf_baselines
from minishare.analysis.figure_style import new_figure, save_figure
from minishare.experiments import claims as ledger, stats
from minishare.files import atomic_write
from minishare.golf import budget, quantize, run as golf_run
from minishare.golf.entry import parse_entry
from minishare.threads import set_num_threads

NAME = "golf"
TITLE = "Golf: the competition's reference entries in the byte budget"
ORDER = 170
READS = ()
SPLIT = "test"
PRECISIONS = ("float32", "int8")
BASE = {"vocab_size": 256, "num_attention_heads": 4, "norm_position": "pre", "tie_word_embeddings": True}
DESIGNS = {
    "not-shared": dict(hidden_size=48, num_hidden_layers=2, intermediate_size=96, sharing="not-shared"),
    "ALBERT-style": dict(embedding_size=32, hidden_size=64, num_hidden_layers=4, intermediate_size=128,
                         sharing="all-shared"),
    "looped": dict(hidden_size=64, num_hidden_layers=2, intermediate_size=128, sharing="all-shared",
                   test_iterations=3),
    "relaxed": dict(hidden_size=56, num_hidden_layers=4, intermediate_size=112, sharing="all-shared",
                    relaxation_rank=4),
}
# steps per design: about 70 CPU-seconds each on one core as first measured (0.020, 0.037, 0.020 and
# 0.033 CPU-seconds a step; 77 to 93 in the full run, two trainings at a time), a few in the quick tier
TIERS = {"quick": {"golf_steps": {"not-shared": 4, "ALBERT-style": 2, "looped": 4, "relaxed": 2}},
         "full": {"golf_steps": {"not-shared": 3500, "ALBERT-style": 1900, "looped": 3500, "relaxed": 2100}},
         "long": {"golf_steps": {"not-shared": 14000, "ALBERT-style": 7600, "looped": 14000, "relaxed": 8400}}}


def entry(design, steps, seed, precision="float32"):
    """The reference entry of ``design``, as a student would declare it."""
    return parse_entry({"name": design, "precision": precision, "model": {**BASE, **DESIGNS[design]},
                        "recipe": {"optimizer": "adamw", "lr": 0.003, "schedule": "cosine", "warmup_steps": min(50, steps),
                                   "batch_size": 16, "seq_len": 64, "steps": steps, "seed": seed}})


def measure(design, steps, seed):
    """One design trained once on one seed, scored at each precision: {precision: row}."""
    e = entry(design, steps, seed)
    parts, tokenizer = golf_run.prepare(e)
    set_num_threads(1)
    model, trained = golf_run.train_entry(e, parts, tokenizer, cpu_seconds=golf_run.CPU_SECONDS)
    rows = {}
    for precision in PRECISIONS:               # float32 first: quantizing in place reads it back
        stored = dataclasses.replace(e, precision=precision)
        quantize.quantize_(model, precision)
        result = golf_run.score_entry(stored, model, parts[SPLIT], tokenizer)
        rows[precision] = {"bits_per_byte": result["bits_per_byte"],
                           "bytes": budget.entry_bytes(stored, tokenizer.vocab_size), **trained}
    return rows


def looped_depths(mean, steps, seed, depths=range(1, 9)):
    """Tuning (``experiments.tuning golf``, on tuning seeds only): the looped design trained at a
    drawn depth of mean ``mean`` for ``steps``, stored at int8, scored on the validation split at
    each depth of ``depths``: {depth: bits per byte}."""
    model_fields = {**DESIGNS["looped"], "num_hidden_layers": mean, "test_iterations": max(depths)}
    e = dataclasses.replace(entry("looped", steps, seed, "int8"), model={**BASE, **model_fields})
    parts, tokenizer = golf_run.prepare(e)
    set_num_threads(1)
    model, _ = golf_run.train_entry(e, parts, tokenizer, cpu_seconds=golf_run.CPU_SECONDS)
    quantize.quantize_(model, "int8")
    scores = {}
    for depth in depths:
        model.test_iterations = depth
        scores[depth] = golf_run.score_entry(e, model, parts["validation"], tokenizer)["bits_per_byte"]
    return scores


def _cached(out, design, steps, seed):
    path = os.path.join(out, "runs", NAME, f"{design}-{steps}-s{seed}.json")     # runs/: not committed
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    rows = measure(design, steps, seed)
    with atomic_write(path) as f:
        json.dump(rows, f)
    return rows


def run(out, settings, progress=True):
    steps, seeds = settings.golf_steps, list(settings.seeds)
    runs = {d: [_cached(out, d, steps[d], s) for s in seeds] for d in DESIGNS}
    return {"seeds": seeds, "steps": dict(steps), "split": SPLIT, "budget_bytes": golf_run.BUDGET_BYTES,
            "designs": {d: {"model": DESIGNS[d]} for d in DESIGNS},
            "rows": {d: {p: [r[p] for r in runs[d]] for p in PRECISIONS} for d in DESIGNS},
            "baselines": golf_baselines.baselines("grammar", SPLIT)}


def values(result, design, precision, field="bits_per_byte"):
    return [row[field] for row in result["rows"][design][precision]]


def gap(result, design):
    """int8's bits per byte minus float32's, per seed: what storing the one trained model costs."""
    return [a - b for a, b in zip(values(result, design, "int8"), values(result, design, "float32"))]


def figures(result, folder):
    from matplotlib import ticker       # matplotlib is the figures' only: new_figure needs it too
    fig, axes = new_figure()
    ax = axes[0][0]
    for i, design in enumerate(result["rows"]):
        for precision, marker in zip(PRECISIONS, ("o", "s")):
            bpb = values(result, design, precision)
            n_bytes = values(result, design, precision, "bytes")[0]
            mid = sum(bpb) / len(bpb)
            ax.errorbar([n_bytes / 1024], [mid], yerr=[[mid - min(bpb)], [max(bpb) - mid]], fmt=marker,
                        color=f"C{i}", capsize=3, label=f"{design}, {precision}")
    ax.axvline(result["budget_bytes"] / 1024, color="black", linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(ticker.FormatStrFormatter("%g"))      # 60, 100, 200 rather than 6×10¹
    ax.xaxis.set_minor_formatter(ticker.FormatStrFormatter("%g"))
    shown = [v for d in result["rows"] for p in PRECISIONS for v in values(result, d, p)]
    far = 1.5 * max(shown)    # a baseline far above every model (the unigram counts) is named, not drawn,
    for name, value in sorted(result["baselines"].items(), key=lambda kv: kv[1]):    # so the models keep the height
        if value > far:
            ax.text(0.01, 0.98, f"no model: {name} counts at {value:.3f}, above the axis",
                    transform=ax.transAxes, fontsize=8, va="top", color="dimgrey")
            continue
        shown.append(value)
        ax.axhline(value, color="grey", linestyle=":", linewidth=1)    # labelled at the axis's left edge
        ax.text(0.01, value, f"no model: {name} counts", transform=ax.get_yaxis_transform(), fontsize=8,
                va="bottom", color="dimgrey")
    ax.set_ylim(0.9 * min(shown), 1.12 * max(shown))
    ax.set(xlabel="stored KiB (log scale; dashed: the budget)", ylabel="held-out bits per byte (test split)",
           title="Golf: bits per byte against stored bytes")
    ax.legend(fontsize=7, ncol=2)
    return [("Held-out bits per byte against stored bytes, one point per design and precision (mean of the "
             "seeds, bars from the least to the most)", save_figure(fig, f"{folder}/golf_bits_per_byte"))]


def report(result, figures):
    lines = ["| entry | precision | stored bytes | bits per byte (per seed) | training CPU-s | steps |",
             "|---|---|---|---|---|---|"]
    for design in result["rows"]:
        for precision in PRECISIONS:
            bpb = ", ".join(f"{v:.4f}" for v in values(result, design, precision))
            cpu = ", ".join(f"{v:.0f}" for v in values(result, design, precision, "train_cpu_seconds"))
            lines.append(f"| {design} | {precision} | {values(result, design, precision, 'bytes')[0]:,} | {bpb} | "
                         f"{cpu} | {result['steps'][design]} |")
    return "\n".join(lines)       # the no-model baselines follow, from the ledger (``baselines``)


def claims(result, seeds):
    out = [ledger.compare(f"golf.{key}_vs_not_shared", NAME, f"Held-out bits per byte at int8, {design} against "
                          "not-shared", "bits_per_byte", "lower", design, "not-shared", seeds,
                          values(result, design, "int8"), values(result, "not-shared", "int8"), primary=True,
                          digits=4)
           for key, design in (("albert", "ALBERT-style"), ("looped", "looped"), ("relaxed", "relaxed"))]
    out.append(ledger.compare("golf.int8_gap_shared_vs_not_shared", NAME, "int8's cost in bits per byte (int8 "
                              "minus float32 of the same trained model), ALBERT-style all-shared against not-shared",
                              "int8_gap_bits_per_byte", "lower", "ALBERT-style", "not-shared", seeds,
                              gap(result, "ALBERT-style"), gap(result, "not-shared"), primary=True, digits=4))
    return out


def baselines(result, settings):
    return [ledger.baseline(NAME, "bits_per_byte", f"{k} counts of the training tokens", v)
            for k, v in result["baselines"].items()]
