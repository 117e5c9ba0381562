"""Experiment "albert_sharing": ALBERT's cross-layer sharing variants (Lan et al., 2019, Table 4),
trained with MLM + SOP on the pre-training corpus of the settings (``pretrain_corpus``) over
several seeds: loss against step. The arms (``albert_arms``) are the ones the other ALBERT
experiments train too: a run two experiments need trains once."""
from minishare.analysis import training_figures
from minishare.analysis.figure_style import save_figure
from minishare.experiments import book_cells as cells, claims as ledger, stats
from minishare.experiments.albert_arms import VARIANTS, no_model_baselines, seed_requests, seed_runs, summarize

NAME = "albert_sharing"
TITLE = "Convergence of ALBERT's sharing variants"
ORDER = 30
READS = ("albert", "batch_size", "eval_every", "pretrain_corpus", "pretrain_lr", "pretrain_steps", "seq_len",
         "vocab_size")


def requests(settings, out=None):
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
            f"not-shared ({params['all-shared']:,} vs {params['not-shared']:,}) and does the same computation "
            "(the memory-and-time section times the steps back to back; these runs trained side by side)."]


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


def baselines(result, settings):
    return no_model_baselines("albert_sharing", [r["final"] for r in result.values()])


# --- the book's table ---------------------------------------------------------------------------------
def book_rows(settings, said):
    """The chapter's table, row by row: (claim, what the paper reports, what this run measured)."""
    return [
        ("all-shared has far fewer parameters than not-shared",
         "ALBERT-base: 12M against 89M at E = 128 (Lan et al., 2019, Table 4)",
         lambda r: f"{cells.get(r, 'all-shared', 'params'):,} against {cells.get(r, 'not-shared', 'params'):,}, "
                   f"{cells.get(r, 'not-shared', 'params') / cells.get(r, 'all-shared', 'params'):.1f}×"),
        ("sharing everything costs some accuracy",
         "all-shared below not-shared on the downstream average (Table 4)",
         lambda r: said("albert_sharing.all_vs_not")),
        ("sharing the FFN hurts more than sharing attention",
         "shared-FFN below shared-attention (Table 4)",
         lambda r: said("albert_sharing.ffn_vs_attention")),
        ("a shared model computes as much per step",
         "sharing saves parameters, not computation (Sec. 4.3)",
         # timed back to back by the memory experiment: these runs trained side by side in parallel
         lambda r: said(f"memory.time_train_N{settings['albert']['num_hidden_layers']}")),
    ]
