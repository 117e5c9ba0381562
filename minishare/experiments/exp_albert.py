"""Experiment "albert_sharing": ALBERT's cross-layer sharing variants (Lan et al., 2019, Table 4),
trained with MLM + SOP on the embedded corpus over several seeds: loss against step and against
wall-clock time. Also the run names and requests the other ALBERT experiments reuse (layer-wise,
SOP/NSP, embedding size, tying, regularizer): a run two experiments need trains once."""
import statistics

from minishare.analysis import count_parameters, training_figures
from minishare.analysis.figure_style import save_figure
from minishare.experiments import stats
from minishare.experiments.runs import cached_run

VARIANTS = ("not-shared", "all-shared", "shared-attention", "shared-ffn")
METRICS = ("eval_mlm_loss", "eval_mlm_accuracy", "eval_sop_accuracy", "eval_nsp_accuracy", "eval_mlm_unigram_loss")
# How a field that differs from ``settings.albert`` shows in a run name.
_TAGS = {"embedding_size": "E", "hidden_size": "H", "num_hidden_layers": "N"}


def albert_request(settings, sharing, objective="sop", seed=0, **config):
    """The run_training arguments of one tiny ALBERT pre-training run; ``config``: AlbertConfig
    fields that differ from ``settings.albert``."""
    return dict(task="pretrain", preset="albert-tiny", overrides={**settings.albert, "sharing": sharing, **config},
                objective=objective, corpus="default", vocab_size=settings.vocab_size,
                seq_len=settings.seq_len, steps=settings.pretrain_steps, batch_size=settings.batch_size,
                lr=settings.pretrain_lr, eval_every=settings.eval_every, seed=seed)


def run_name(settings, sharing, objective="sop", seed=0, **config):
    """A readable, unique name, e.g. "albert-all-shared-sop-E16-s0"; fields equal to
    ``settings.albert`` are left out, so equal requests get equal names."""
    tags = []
    for field, value in sorted(config.items()):
        if settings.albert.get(field) == value:
            continue
        if field == "tie_word_embeddings":
            tags.append("tied" if value else "untied")
        else:
            tags.append(f"{_TAGS.get(field, field)}{value}")
    return "-".join(["albert", sharing, objective, *tags, f"s{seed}"])


def seed_requests(settings, sharing, objective="sop", **config):
    """{run name: request} of one configuration, once per seed of ``settings.seeds``."""
    return {run_name(settings, sharing, objective, seed, **config):
            albert_request(settings, sharing, objective, seed, **config) for seed in settings.seeds}


def seed_runs(out, settings, sharing, objective="sop", progress=True, **config):
    """The finished runs of one configuration, one per seed (trained here when missing)."""
    return [cached_run(out, name, progress, **request)
            for name, request in seed_requests(settings, sharing, objective, **config).items()]


def summarize(runs, metrics=METRICS):
    """One configuration over seeds: parameters, every final metric as a ``stats.spread``, the
    median step time of each seed as a spread, and the histories (one per seed)."""
    finals = [r["final"] for r in runs]
    return {"params": count_parameters(runs[0]["model"]),
            "final": {m: stats.spread([f[m] for f in finals]) for m in metrics if all(m in f for f in finals)},
            "step_time": stats.spread([statistics.median(row["step_time"] for row in r["history"]) for r in runs]),
            "histories": [r["history"] for r in runs]}


def requests(settings):
    return {name: request for sharing in VARIANTS for name, request in seed_requests(settings, sharing).items()}


def run(out, settings, progress=True):
    return {sharing: summarize(seed_runs(out, settings, sharing, progress=progress)) for sharing in VARIANTS}


def figures(result, folder):
    histories = {name: r["histories"] for name, r in result.items()}
    return [
        ("MLM loss against step, ALBERT's four sharing variants (N = 4, Post-LN): mean over seeds, "
         "band min–max; held-out as open markers",
         save_figure(training_figures.plot_convergence(histories, x="step", y="mlm_loss", eval_y="eval_mlm_loss",
                                                       title="ALBERT sharing variants (Post-LN)"),
                     f"{folder}/albert_loss_vs_step")),
        ("The same runs against wall-clock time: sharing saves parameters, not compute",
         save_figure(training_figures.plot_convergence(histories, x="wall_clock", y="mlm_loss", eval_y="eval_mlm_loss",
                                                       title="ALBERT sharing variants against time (Post-LN)"),
                     f"{folder}/albert_loss_vs_time")),
    ]


def _cell(r, metric):
    return stats.fmt(r["final"][metric]) if metric in r["final"] else "–"


def report(result, figs):
    n = next(iter(result.values()))["final"]["eval_mlm_loss"]["n"]
    rows = [f"Mean ± standard deviation (min–max) over {n} seeds.", "",
            "| variant | parameters | median step time (s) | held-out MLM loss | MLM accuracy | SOP accuracy |",
            "|---|---|---|---|---|---|"]
    for name, r in result.items():
        rows.append(f"| {name} | {r['params']:,} | {stats.fmt(r['step_time'])} | {_cell(r, 'eval_mlm_loss')} "
                    f"| {_cell(r, 'eval_mlm_accuracy')} | {_cell(r, 'eval_sop_accuracy')} |")
    return "\n".join(rows)


def compare(a_name, a, b_name, b, what, lower_is_better=True):
    """One guarded sentence comparing two spreads of ``what``."""
    numbers = f"{a_name} {stats.fmt(a)} vs {b_name} {stats.fmt(b)}"
    if not stats.separated(a, b):
        return f"{what}: {numbers}; the run cannot tell them apart (seed ranges overlap)."
    better = a_name if (a["mean"] < b["mean"]) == lower_is_better else b_name
    return f"{what}: {numbers}; {better} is better in every seed (the seed ranges do not overlap)."


def observations(result):
    """Statements computed from this run, each with its numbers; a difference is stated only
    where the seed ranges separate."""
    loss = {name: r["final"]["eval_mlm_loss"] for name, r in result.items()}
    params = {name: r["params"] for name, r in result.items()}
    notes = [f"all-shared has {params['not-shared'] / params['all-shared']:.1f}× fewer parameters than "
             f"not-shared ({params['all-shared']:,} vs {params['not-shared']:,}) and does the same computation. "
             "The step times in the table are not compared: these runs trained four at a time in parallel "
             "processes on a shared machine; the memory-and-time section times steps back to back."]
    unigram = result["not-shared"]["final"].get("eval_mlm_unigram_loss")
    worst = max(s["max"] for s in loss.values())
    if unigram is not None:
        notes.append(f"Unigram baseline for the held-out masked tokens: {unigram['mean']:.3f}; the worst seed "
                     f"of any variant reaches {worst:.3f}, "
                     + ("below it: every model uses context." if worst < unigram["mean"]
                        else "not below it: not every model uses context yet (too little training)."))
    notes.append(compare("all-shared", loss["all-shared"], "not-shared", loss["not-shared"],
                         "Held-out MLM loss, all-shared against not-shared")
                 + " (The paper's cost of sharing everything at E = 128 is 1.5 points of average accuracy.)")
    notes.append(compare("shared-FFN", loss["shared-ffn"], "shared-attention", loss["shared-attention"],
                         "Held-out MLM loss, shared-FFN against shared-attention")
                 + " (The paper's Table 4: sharing the FFN costs more than sharing attention.)")
    return notes
