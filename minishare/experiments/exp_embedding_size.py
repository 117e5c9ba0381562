"""Experiment "embedding_size": ALBERT's Table 3, the accuracy half. Held-out MLM loss and accuracy
against the embedding size E at a fixed H, for not-shared and all-shared models, over seeds. The
paper (H = 768): not-shared improves as E grows to H; all-shared is best at E = 128 and gains
nothing past it. Parameters are counted beside (they grow by V × ΔE + ΔE × H)."""
from minishare.analysis import training_figures
from minishare.analysis.figure_style import save_figure
from minishare.experiments import exp_albert, stats

SHARINGS = ("not-shared", "all-shared")


def requests(settings):
    return {name: request for sharing in SHARINGS for E in settings.embedding_sizes
            for name, request in exp_albert.seed_requests(settings, sharing, embedding_size=E).items()}


def run(out, settings, progress=True):
    result = {"H": settings.albert["hidden_size"], "N": settings.albert["num_hidden_layers"],
              "E": list(settings.embedding_sizes), "models": {}}
    for sharing in SHARINGS:
        per_E = []
        for E in settings.embedding_sizes:
            summary = exp_albert.summarize(exp_albert.seed_runs(out, settings, sharing, progress=progress,
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
    rows += ["", "Paper (Table 3, H = 768, average of five downstream tasks): not-shared 81.3 / 81.7 / 82.3 / 82.3 "
             "at E = 64 / 128 / 256 / 768; all-shared 79.0 / 80.1 / 79.6 / 79.8."]
    return "\n".join(rows)


def observations(result):
    notes, E = [], result["E"]
    for sharing, per_E in result["models"].items():
        losses = [s["final"]["eval_mlm_loss"] for s in per_E]
        best = min(range(len(E)), key=lambda i: losses[i]["mean"])
        small, large = losses[0], losses[-1]
        trend = ("the run cannot tell the smallest from the largest E (seed ranges overlap)"
                 if not stats.separated(small, large) else
                 f"E = {E[-1]} is {'better' if large['mean'] < small['mean'] else 'worse'} than E = {E[0]} in every seed")
        notes.append(f"{sharing}: held-out MLM loss at E = {E[0]} {stats.fmt(small)}, at E = {E[-1]} {stats.fmt(large)}: "
                     f"{trend}; lowest mean at E = {E[best]}. Parameters {per_E[0]['params']:,} to {per_E[-1]['params']:,}.")
    for sharing, per_E in result["models"].items():
        losses = [s["final"]["eval_mlm_loss"] for s in per_E]
        steps = []
        for i in range(len(E) - 1):
            a, b = losses[i], losses[i + 1]
            steps.append(f"E = {E[i]} → {E[i + 1]}: {b['mean'] - a['mean']:+.3f} ("
                         + (("better" if b["mean"] < a["mean"] else "worse") + " in every seed" if stats.separated(a, b)
                            else "cannot tell") + ")")
        notes.append(f"{sharing}, each step up in E (change of the mean held-out loss; negative helps): "
                     + "; ".join(steps) + ".")
    return notes
