"""Experiment "embedding_size": ALBERT's Table 3, the accuracy half. Held-out MLM loss and accuracy
against the embedding size E at a fixed H, for not-shared and all-shared models, over seeds. The
paper (H = 768): not-shared improves as E grows to H; all-shared is best at E = 128 and gains
nothing past it. Parameters are counted beside (they grow by V × ΔE + ΔE × H)."""
from minishare.analysis import training_figures
from minishare.analysis.figure_style import save_figure
from minishare.experiments import albert_arms, book_cells as cells, claims as ledger, stats

NAME = "embedding_size"
TITLE = "Held-out loss against the embedding size E (ALBERT Table 3)"
ORDER = 60
READS = ("albert", "batch_size", "embedding_sizes", "eval_every", "pretrain_corpus", "pretrain_lr",
         "pretrain_steps", "seq_len", "vocab_size")

SHARINGS = ("not-shared", "all-shared")


def requests(settings, out=None):
    return {name: request for sharing in SHARINGS for E in settings.embedding_sizes
            for name, request in albert_arms.seed_requests(settings, sharing, embedding_size=E).items()}


def run(out, settings, progress=True):
    result = {"H": settings.albert["hidden_size"], "N": settings.albert["num_hidden_layers"],
              "E": list(settings.embedding_sizes), "models": {}}
    for sharing in SHARINGS:
        per_E = []
        for E in settings.embedding_sizes:
            summary = albert_arms.summarize(albert_arms.seed_runs(out, settings, sharing, progress=progress,
                                                                embedding_size=E))
            del summary["histories"]          # the finals are what this experiment compares
            per_E.append(summary)
        result["models"][sharing] = per_E
    return result


def figures(result, folder):
    figs = []
    for metric, what, unit in (("eval_mlm_loss", "Held-out MLM loss", "cross-entropy, nats"),
                               ("eval_mlm_accuracy", "Held-out MLM accuracy", "fraction of masked tokens")):
        series = {f"{sharing} (N = {result['N']})": [s["final"][metric]["values"] for s in per_E]
                  for sharing, per_E in result["models"].items()}
        fig = training_figures.plot_metric_vs(result["E"], series, "embedding size E", f"{what} ({unit})",
                                              f"{what} against E at H = {result['H']} (Post-LN; ALBERT Table 3)", log_x=True)
        figs.append((f"{what} against the embedding size E at H = {result['H']}, not-shared and all-shared",
                     save_figure(fig, f"{folder}/{metric}_vs_E")))
    return figs


def report(result, figs):
    n = result["models"]["not-shared"][0]["final"]["eval_mlm_loss"]["n"]
    rows = [f"H = {result['H']}, N = {result['N']}, Post-LN; mean ± standard deviation (min–max) over {n} seeds.", "",
            "| model | E | parameters | held-out MLM loss | MLM accuracy |", "|---|---|---|---|---|"]
    for sharing, per_E in result["models"].items():
        for E, s in zip(result["E"], per_E):
            rows.append(f"| {sharing} | {E} | {s['params']:,} | {stats.fmt(s['final']['eval_mlm_loss'])} "
                        f"| {stats.fmt(s['final']['eval_mlm_accuracy'])} |")
    rows += ["", "Paper (Table 3, H = 768, average of five downstream tasks): not-shared 81.3 / 81.7 / 81.8 / 82.3 "
             "at E = 64 / 128 / 256 / 768; all-shared 79.0 / 80.1 / 79.6 / 79.8."]
    return "\n".join(rows)


def observations(result):
    notes, E = [], result["E"]
    for sharing, per_E in result["models"].items():
        losses = [s["final"]["eval_mlm_loss"] for s in per_E]
        best = min(range(len(E)), key=lambda i: losses[i]["mean"])
        notes.append(f"{sharing}: lowest mean held-out MLM loss at E = {E[best]}; parameters "
                     f"{per_E[0]['params']:,} at E = {E[0]} to {per_E[-1]['params']:,} at E = {E[-1]}.")
    return notes


PAPER = {"not-shared": "not-shared barely changes with E: 81.3, 81.7, 81.8, 82.3 at E = 64, 128, 256, 768 "
                       "(Lan et al., 2019, Table 3)",
         "all-shared": "all-shared is best at E = 128: 79.0, 80.1, 79.6, 79.8 at E = 64, 128, 256, 768 "
                       "(Lan et al., 2019, Table 3)"}


def claims(result, seeds):
    """Per sharing variant: the largest E against the smallest (primary), and each step up in E."""
    out, E = [], result["E"]
    for sharing, per_E in result["models"].items():
        loss = [s["final"]["eval_mlm_loss"]["values"] for s in per_E]
        pairs = [(len(E) - 1, 0, True)] + [(i + 1, i, False) for i in range(len(E) - 1)
                                           if (i + 1, i) != (len(E) - 1, 0)]
        for hi, lo, primary in pairs:
            out.append(ledger.compare(
                f"embedding_size.{sharing}.E{E[hi]}_vs_E{E[lo]}", "embedding_size",
                f"Held-out MLM loss, {sharing}, E = {E[hi]} against E = {E[lo]}", "eval_mlm_loss", "lower",
                f"E = {E[hi]}", f"E = {E[lo]}", seeds, loss[hi], loss[lo], PAPER.get(sharing), primary))
    return out


def baselines(result, settings):
    return albert_arms.no_model_baselines("embedding_size", [m["final"] for per_E in result["models"].values() for m in per_E])


# --- the book's table ---------------------------------------------------------------------------------
def book_rows(settings, said):
    """The chapter's table, row by row: (claim, what the paper reports, what this run measured)."""
    def per_E(model):
        def f(r):
            return "; ".join(f"E = {E}: {cells.num(cells.get(m, 'final', 'eval_mlm_loss'))}"
                             for E, m in zip(cells.get(r, "E"), cells.get(r, "models", model)))
        return f
    return [
        ("without sharing, E matters little",
         "not-shared: 81.3, 81.7, 81.8, 82.3 at E = 64, 128, 256, 768 (Lan et al., 2019, Table 3)",
         lambda r: "held-out MLM loss, not-shared: " + per_E("not-shared")(r)),
        ("with sharing, a small E is best",
         "all-shared: 79.0, 80.1, 79.6, 79.8 at E = 64, 128, 256, 768, best at 128 (Table 3)",
         lambda r: "held-out MLM loss, all-shared: " + per_E("all-shared")(r)),
    ]
