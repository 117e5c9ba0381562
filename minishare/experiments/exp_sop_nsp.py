"""Experiment "sop_nsp": ALBERT's Table 5 layout. All-shared models trained with SOP and with NSP,
one per seed; each is evaluated on held-out SOP and NSP examples. The paper: NSP-trained scores
52.0% on SOP (chance), SOP-trained 78.9% on NSP and 86.5% on SOP."""
import math

from minishare.experiments import exp_albert, stats

OBJECTIVES = ("sop", "nsp")
METRICS = ("eval_mlm_accuracy", "eval_nsp_accuracy", "eval_sop_accuracy")


def requests(settings):
    return {name: request for objective in OBJECTIVES
            for name, request in exp_albert.seed_requests(settings, "all-shared", objective).items()}


def run(out, settings, progress=True):
    result = {"n_eval": 4 * settings.batch_size}       # PretrainingTask's held-out set: 4 batches
    for objective in OBJECTIVES:
        runs = exp_albert.seed_runs(out, settings, "all-shared", objective, progress=progress)
        result[objective] = {m: stats.spread([r["final"][m] for r in runs]) for m in METRICS}
    return result


def figures(result, folder):
    return []


def report(result, figs):
    n = result["sop"]["eval_sop_accuracy"]["n"]
    rows = [f"All-shared models; mean ± standard deviation (min–max) over {n} seeds; at most "
            f"{result['n_eval']} held-out examples per task.", "",
            "| trained with | MLM accuracy | NSP accuracy | SOP accuracy |", "|---|---|---|---|"]
    for objective in OBJECTIVES:
        rows.append(f"| {objective.upper()} | " + " | ".join(stats.fmt(result[objective][m]) for m in METRICS) + " |")
    rows += ["", "Paper (Table 5, ALBERT-base): NSP-trained 52.0% SOP (chance); SOP-trained "
             "78.9% NSP, 86.5% SOP."]
    return "\n".join(rows)


def versus_chance(s, n_eval):
    """Where a held-out accuracy stands against chance (50%): above (below) only when every seed
    is more than two binomial standard errors of a coin on ``n_eval`` examples above (below) it."""
    margin = 2 * math.sqrt(0.25 / n_eval)
    if s["min"] > 0.5 + margin:
        return f"above chance in every seed (each above {0.5 + margin:.1%})"
    if s["max"] < 0.5 - margin:
        return f"below chance in every seed (each below {0.5 - margin:.1%})"
    return f"the run cannot tell it from chance (50% ± {margin:.1%}, two standard errors of a coin)"


def observations(result):
    n, notes = result["n_eval"], []
    for trained in OBJECTIVES:
        for task in OBJECTIVES:
            s = result[trained][f"eval_{task}_accuracy"]
            notes.append(f"{trained.upper()}-trained, evaluated on {task.upper()}: {stats.fmt(s)}: "
                         f"{versus_chance(s, n)}.")
    a, b = result["sop"]["eval_sop_accuracy"], result["nsp"]["eval_sop_accuracy"]
    notes.append(f"On SOP, SOP-trained {stats.fmt(a)} against NSP-trained {stats.fmt(b)}: "
                 + ("the seed ranges do not overlap." if stats.separated(a, b)
                    else "the run cannot tell them apart (seed ranges overlap)."))
    return notes
