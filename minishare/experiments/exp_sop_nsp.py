"""Experiment "sop_nsp": ALBERT's Table 5 layout. All-shared models trained with SOP and with NSP,
one per seed; each is evaluated on held-out SOP and NSP examples. The paper: NSP-trained scores
52.0% on SOP (chance), SOP-trained 78.9% on NSP and 86.5% on SOP. Beside them, the cue-only
baselines (``minishare.analysis.cues``) on the very examples the models are scored on: what a rule
that never reads the sentences scores, so a model's accuracy can be read against it."""
import math

from minishare.analysis import cues
from minishare.experiments import albert_arms, book_cells as cells, claims as ledger, stats
from minishare.run.build import make_task

NAME = "sop_nsp"
TITLE = "SOP against NSP (ALBERT Table 5 layout)"
ORDER = 50
READS = ("albert", "batch_size", "eval_every", "pretrain_corpus", "pretrain_lr", "pretrain_steps", "seq_len",
         "vocab_size")

OBJECTIVES = ("sop", "nsp")
METRICS = ("eval_mlm_accuracy", "eval_nsp_accuracy", "eval_sop_accuracy")


def requests(settings, out=None):
    return {name: request for objective in OBJECTIVES
            for name, request in albert_arms.seed_requests(settings, "all-shared", objective).items()}


def cue_baselines(settings, seed):
    """{task: {"n": held-out examples, "majority": accuracy, "best_cue": the best accuracy of any
    single cue's rule}} for one seed: rules fitted on that seed's training examples, scored on the
    held-out examples the models of that seed are evaluated on."""
    out = {}
    for objective in OBJECTIVES:
        task, _ = make_task("pretrain", seed, settings.batch_size, settings.seq_len, objective,
                            settings.pretrain_corpus, settings.vocab_size)
        held_out = task.eval_sets[objective]
        accuracies = cues.cue_accuracies(task.train.examples(seed), held_out, task.tokenizer)
        best = max((name for name in accuracies if name != "majority"), key=accuracies.__getitem__)
        out[objective] = {"n": sum(len(b["input_ids"]) for b in held_out), "majority": accuracies["majority"],
                          "best_cue": accuracies[best], "best_cue_name": best}
    return out


def run(out, settings, progress=True):
    result = {"cues": [cue_baselines(settings, seed) for seed in settings.seeds]}
    result["n_eval"] = min(c[objective]["n"] for c in result["cues"] for objective in OBJECTIVES)
    for objective in OBJECTIVES:
        runs = albert_arms.seed_runs(out, settings, "all-shared", objective, progress=progress)
        result[objective] = {m: stats.spread([r["final"][m] for r in runs]) for m in METRICS}
    return result


def figures(result, folder):
    return []


def report(result, figs):
    n = result["sop"]["eval_sop_accuracy"]["n"]
    rows = [f"All-shared models; mean ± standard deviation (min–max) over {n} seeds; at least "
            f"{result['n_eval']} held-out examples per task and seed.", "",
            "| trained with | MLM accuracy | NSP accuracy | SOP accuracy |", "|---|---|---|---|"]
    for objective in OBJECTIVES:
        rows.append(f"| {objective.upper()} | " + " | ".join(stats.fmt(result[objective][m]) for m in METRICS) + " |")
    for key, what in (("majority", "no model: always the training majority label"),
                      ("best_cue", f"no model: the best of {len(cues.CUES)} cue-only rules (segment ends, lengths, "
                                   "first/last tokens, openings), fitted on training examples")):
        rows.append(f"| {what} | – | " + " | ".join(
            stats.fmt(stats.spread([c[t][key] for c in result["cues"]])) for t in ("nsp", "sop")) + " |")
    rows += ["", "Paper (Table 5, ALBERT-base): NSP-trained 52.0% SOP (chance); SOP-trained "
             "78.9% NSP, 86.5% SOP."]
    return "\n".join(rows)


def coin_band(n_eval):
    """Two binomial standard errors of a coin on ``n_eval`` examples: how far from 50% a
    no-skill accuracy lands by chance."""
    return 2 * math.sqrt(0.25 / n_eval)


def observations(result):
    n = result["n_eval"]
    notes = []
    for task in OBJECTIVES:
        best = stats.spread([c[task]["best_cue"] for c in result["cues"]])
        names = sorted({c[task]["best_cue_name"] for c in result["cues"]})
        band = coin_band(n)
        reading = ("within the band, where the best of several rules at chance lands by selection alone"
                   if best["mean"] <= 0.5 + band else
                   "beyond the band: a cue that reads the label without reading the text, which a model can use too")
        notes.append(f"Cue-only rules on the held-out {task.upper()} examples: the best of {len(cues.CUES)} "
                     f"({', '.join(names)}) scores {stats.fmt(best)}, against a coin's 50% ± {band:.1%} "
                     f"(two standard errors on {n} examples): {reading}.")
    return notes


def claims(result, seeds):
    """SOP-trained against NSP-trained on each held-out task (accuracy; the SOP task is primary),
    and each model against chance (50%) on each task."""
    paper = {"sop": "SOP-trained 86.5% against NSP-trained 52.0% on SOP (Lan et al., 2019, Table 5)",
             "nsp": "SOP-trained 78.9% on NSP: SOP solves NSP to a large part (Lan et al., 2019, Table 5)"}
    return [ledger.compare(f"sop_nsp.on_{task}", "sop_nsp", f"Held-out {task.upper()} accuracy, SOP-trained "
                           "against NSP-trained", f"eval_{task}_accuracy", "higher", "SOP-trained", "NSP-trained",
                           seeds, result["sop"][f"eval_{task}_accuracy"]["values"],
                           result["nsp"][f"eval_{task}_accuracy"]["values"], paper[task], task == "sop")
            for task in OBJECTIVES] + [
        ledger.compare(f"sop_nsp.{trained}_on_{task}_vs_chance", "sop_nsp",
                       f"Held-out {task.upper()} accuracy of the {trained.upper()}-trained model against chance",
                       f"eval_{task}_accuracy", "higher", f"{trained.upper()}-trained", "chance", seeds,
                       result[trained][f"eval_{task}_accuracy"]["values"], [0.5] * len(seeds),
                       "NSP-trained 52.0% on SOP: chance (Lan et al., 2019, Table 5)" if (trained, task) == ("nsp", "sop")
                       else None, gate=False)
        for trained in OBJECTIVES for task in OBJECTIVES]


def baselines(result, settings):
    """The no-model rules of each task, on the held-out examples its models are scored on (mean over
    seeds): the majority label and every cue-only rule of ``cues.cue_accuracies``."""
    out = []
    for task in OBJECTIVES:
        tables = []
        for seed in settings.seeds:
            made, _ = make_task("pretrain", seed, settings.batch_size, settings.seq_len, task,
                                settings.pretrain_corpus, settings.vocab_size)
            tables.append(cues.cue_accuracies(made.train.examples(seed), made.eval_sets[task], made.tokenizer))
        for rule in tables[0]:
            name = "majority label" if rule == "majority" else f"cue-only rule {rule}"
            out.append(ledger.baseline("sop_nsp", f"eval_{task}_accuracy", name,
                                       sum(t[rule] for t in tables) / len(tables)))
    return out


# --- the book's table ---------------------------------------------------------------------------------
def book_rows(settings, said):
    """The chapter's table, row by row: (claim, what the paper reports, what this run measured)."""
    return [
        ("a model trained with NSP cannot do SOP", "52.0 % on SOP (chance; Lan et al., 2019, Table 5)",
         lambda r: cells.pct(cells.get(r, "nsp", "eval_sop_accuracy"))),
        ("a model trained with SOP does NSP too", "78.9 % on NSP (Table 5)",
         lambda r: cells.pct(cells.get(r, "sop", "eval_nsp_accuracy"))),
        ("SOP on SOP", "86.5 % (Table 5)", lambda r: cells.pct(cells.get(r, "sop", "eval_sop_accuracy"))),
        ("NSP on NSP", "(Table 5; NSP can be told by topic as well as by coherence)", lambda r: cells.pct(cells.get(r, "nsp", "eval_nsp_accuracy"))),
    ]
