"""Experiment "albert_sharing": ALBERT's cross-layer sharing variants (Lan et al., 2019, Table 4),
trained with MLM + SOP on the pre-training corpus of the settings (``pretrain_corpus``) over several seeds: loss against step. Also the run names and requests the other ALBERT experiments reuse (layer-wise,
SOP/NSP, embedding size, tying, regularizer): a run two experiments need trains once."""
import statistics

from minishare.analysis import count_parameters, training_figures
from minishare.analysis.figure_style import save_figure
from minishare.experiments import claims as ledger, stats
from minishare.experiments.runs import cached_run

VARIANTS = ("not-shared", "all-shared", "shared-attention", "shared-ffn")
METRICS = ("eval_mlm_loss", "eval_mlm_accuracy", "eval_sop_accuracy", "eval_nsp_accuracy", "eval_mlm_unigram_loss")
# How a field that differs from ``settings.albert`` shows in a run name.
_TAGS = {"embedding_size": "E", "hidden_size": "H", "num_hidden_layers": "N"}


def albert_request(settings, sharing, objective="sop", seed=0, steps=None, **config):
    """The run_training arguments of one tiny ALBERT pre-training run; ``config``: AlbertConfig
    fields that differ from ``settings.albert``; ``steps``: other than ``settings.pretrain_steps``."""
    return dict(task="pretrain", preset="albert-tiny", overrides={**settings.albert, "sharing": sharing, **config},
                objective=objective, corpus=settings.pretrain_corpus, vocab_size=settings.vocab_size,
                seq_len=settings.seq_len, steps=steps or settings.pretrain_steps, batch_size=settings.batch_size,
                lr=settings.pretrain_lr, eval_every=settings.eval_every, seed=seed)


def run_name(settings, sharing, objective="sop", seed=0, steps=None, **config):
    """A readable, unique name, e.g. "albert-all-shared-sop-E16-s0"; fields equal to
    ``settings.albert`` are left out, so equal requests get equal names."""
    tags = [] if steps in (None, settings.pretrain_steps) else [f"{steps}steps"]
    for field, value in sorted(config.items()):
        if settings.albert.get(field) == value:
            continue
        if field == "tie_word_embeddings":
            tags.append("tied" if value else "untied")
        else:
            tags.append(f"{_TAGS.get(field, field)}{value}")
    return "-".join(["albert", sharing, objective, *tags, f"s{seed}"])


def seed_requests(settings, sharing, objective="sop", steps=None, **config):
    """{run name: request} of one configuration, once per seed of ``settings.seeds``."""
    return {run_name(settings, sharing, objective, seed, steps, **config):
            albert_request(settings, sharing, objective, seed, steps, **config) for seed in settings.seeds}


def seed_runs(out, settings, sharing, objective="sop", progress=True, steps=None, **config):
    """The finished runs of one configuration, one per seed (trained here when missing)."""
    return [cached_run(out, name, progress, **request)
            for name, request in seed_requests(settings, sharing, objective, steps, **config).items()]


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
         "band min–max; held-out as open markers. Every variant computes the same per step, so steps "
         "are compute too (the runs trained side by side, so their clocks are not compared)",
         save_figure(training_figures.plot_convergence(histories, x="step", y="mlm_loss", eval_y="eval_mlm_loss",
                                                       title="ALBERT sharing variants (Post-LN)"),
                     f"{folder}/albert_loss_vs_step")),
    ]


def _cell(r, metric):
    return stats.fmt(r["final"][metric]) if metric in r["final"] else "–"


def report(result, figs):
    n = next(iter(result.values()))["final"]["eval_mlm_loss"]["n"]
    rows = [f"Mean ± standard deviation (min–max) over {n} seeds. (Step times are not compared here: these "
            "runs trained side by side; the memory-and-time experiment times steps back to back.)", "",
            "| variant | parameters | held-out MLM loss | MLM accuracy | SOP accuracy |",
            "|---|---|---|---|---|"]
    for name, r in result.items():
        rows.append(f"| {name} | {r['params']:,} | {_cell(r, 'eval_mlm_loss')} "
                    f"| {_cell(r, 'eval_mlm_accuracy')} | {_cell(r, 'eval_sop_accuracy')} |")
    return "\n".join(rows)


def values(result, variant, metric="eval_mlm_loss"):
    """The per-seed values of one variant's final metric, in the order of the seeds."""
    return result[variant]["final"][metric]["values"]


def observations(result):
    """Facts read off this run (no comparison between variants: those are ``claims``)."""
    params = {name: r["params"] for name, r in result.items()}
    return [f"all-shared has {params['not-shared'] / params['all-shared']:.1f}× fewer parameters than "
            f"not-shared ({params['all-shared']:,} vs {params['not-shared']:,}) and does the same computation. "
            "The step times in the table are not compared: these runs trained several at a time in parallel "
            "processes on a shared machine; the memory-and-time section times steps back to back."]


def claims(result, seeds):
    """The variant comparisons of ALBERT's Table 4 on held-out MLM loss, paired by seed; the first
    two are the experiment's primary comparisons."""
    def mlm(id, a, b, what, paper, primary):
        return ledger.compare(f"albert_sharing.{id}", "albert_sharing", what, "eval_mlm_loss", "lower", a, b,
                              seeds, values(result, a), values(result, b), paper, primary)
    return [
        mlm("all_vs_not", "all-shared", "not-shared", "Held-out MLM loss, all-shared against not-shared",
            "all-shared is 1.6 points of downstream average below not-shared at E = 128 (80.1 against 81.7; "
            "Lan et al., 2019, Table 3)", True),
        mlm("ffn_vs_attention", "shared-ffn", "shared-attention",
            "Held-out MLM loss, shared-FFN against shared-attention",
            "sharing the FFN costs more than sharing attention (Lan et al., 2019, Table 4)", True),
        mlm("attention_vs_not", "shared-attention", "not-shared",
            "Held-out MLM loss, shared-attention against not-shared",
            "sharing attention costs little (Lan et al., 2019, Table 4)", False),
    ]


def no_model_baselines(experiment, finals):
    """No model: the unigram distribution of the training tokens scored on the held-out masked
    tokens (``eval_mlm_unigram_loss`` of the runs' ``finals``, the same held-out set for every arm
    of a seed; its mean over seeds), and the majority label of SOP (balanced: half the pairs are
    swapped)."""
    out = [ledger.baseline(experiment, "eval_sop_accuracy", "majority label", 0.5)]
    unigram = [f["eval_mlm_unigram_loss"]["mean"] for f in finals if "eval_mlm_unigram_loss" in f]
    if unigram:
        out.insert(0, ledger.baseline(experiment, "eval_mlm_loss", "unigram", unigram[0]))
    return out


def baselines(result, settings):
    return no_model_baselines("albert_sharing", [r["final"] for r in result.values()])
