"""Experiment "regularizer": is sharing a regularizer? The gap between the held-out MLM loss and
the training MLM loss at the end of training, for ALBERT's four sharing variants (the runs of
"albert_sharing", over seeds). A model that memorizes its training documents has a large gap; the
runs see the training corpus many times (fresh masks and segments each epoch), so memorizing is
possible. The training loss is the mean over the last ``eval_every`` steps (the batches the model
trained on just before the final held-out evaluation)."""
from minishare.experiments import albert_arms, book_cells as cells, claims as ledger, stats

NAME = "regularizer"
TITLE = "Sharing as a regularizer: the train/held-out gap"
ORDER = 80
READS = ("albert", "batch_size", "eval_every", "pretrain_corpus", "pretrain_lr", "pretrain_steps", "seq_len",
         "vocab_size")


def requests(settings, out=None):
    return {name: request for sharing in albert_arms.VARIANTS
            for name, request in albert_arms.seed_requests(settings, sharing).items()}


def gap(history, window):
    """Final held-out MLM loss minus the mean training MLM loss over the last ``window`` steps."""
    train = [row["mlm_loss"] for row in history[-window:]]
    return history[-1]["eval_mlm_loss"] - sum(train) / len(train)


def run(out, settings, progress=True):
    result = {"window": settings.eval_every, "models": {}}
    for sharing in albert_arms.VARIANTS:
        runs = albert_arms.seed_runs(out, settings, sharing, progress=progress)
        window = settings.eval_every
        result["models"][sharing] = {
            "params": albert_arms.summarize(runs)["params"],
            "train": stats.spread([sum(row["mlm_loss"] for row in r["history"][-window:]) / window for r in runs]),
            "held_out": stats.spread([r["history"][-1]["eval_mlm_loss"] for r in runs]),
            "gap": stats.spread([gap(r["history"], window) for r in runs]),
            "unigram": stats.spread([r["final"]["eval_mlm_unigram_loss"] for r in runs])}
    return result


def figures(result, folder):
    return []


def report(result, figs):
    n = result["models"]["not-shared"]["gap"]["n"]
    rows = [f"Mean ± standard deviation (min–max) over {n} seeds; training loss averaged over the last "
            f"{result['window']} steps.", "",
            "| variant | parameters | training MLM loss | held-out MLM loss | gap (held-out − training) |",
            "|---|---|---|---|---|"]
    for name, r in result["models"].items():
        rows.append(f"| {name} | {r['params']:,} | {stats.fmt(r['train'])} | {stats.fmt(r['held_out'])} "
                    f"| {stats.fmt(r['gap'])} |")
    return "\n".join(rows)


def observations(result):
    return ["A smaller gap is regularization only together with a held-out loss that is not worse; a "
            "smaller gap from a higher training loss is a model that fits less."]


def claims(result, seeds):
    """All-shared against not-shared: the gap (primary), the training loss and the held-out loss,
    each compared only where both models beat the unigram on held-out MLM loss (a gap of models
    that learned nothing says nothing of regularization)."""
    m = result["models"]
    gate = {"metric": "eval_mlm_loss", "what": "held-out MLM loss", "better": "lower",
            "a": m["all-shared"]["held_out"]["values"], "b": m["not-shared"]["held_out"]["values"]}
    return [ledger.compare(f"regularizer.{key}", "regularizer", f"{what}, all-shared against not-shared",
                           f"mlm_{key}", "lower", "all-shared", "not-shared", seeds,
                           m["all-shared"][key]["values"], m["not-shared"][key]["values"], None, key == "gap",
                           gate=gate)
            for key, what in (("gap", "Held-out minus training MLM loss"), ("train", "Training MLM loss"),
                              ("held_out", "Held-out MLM loss"))]


def baselines(result, settings):
    """The unigram's held-out MLM loss, the line both models must pass (a result made before it was
    recorded has none, and its claims go ungated)."""
    unigram = result["models"]["not-shared"].get("unigram")
    return [ledger.baseline("regularizer", "eval_mlm_loss", "unigram", unigram["mean"])] if unigram else []


# --- the book's table ---------------------------------------------------------------------------------
def book_rows(settings, said):
    """The chapter's table, row by row: (claim, what the paper reports, what this run measured)."""
    def gap(v):
        return lambda r: cells.num(cells.get(r, "models", v, "gap"))
    return [(f"train/held-out gap, {v}", "not reported", gap(v))
            for v in ("not-shared", "all-shared", "shared-attention", "shared-ffn")]
