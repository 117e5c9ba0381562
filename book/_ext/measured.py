"""What the chapters include from the reproduction, generated at build time: each experiment's
"what the papers report against what we measured" tables (written by the experiment itself,
``book_tables``), its claims block and the scorecard.

The *paper* column holds the papers' published numbers, cited in each row; the *measured* column
is read from the reproduction's ``book/figures/<experiment>/result.json`` when the book is built,
never typed. A measurement over seeds prints as mean ± std (min–max). A
comparison between two arms is the ledger's sentence (``book/figures/claims.json``, made by
``minishare.experiments.claims``): the paired difference over seeds with its 95% interval and its
verdict, never a verdict computed here.

The result files change shape as the experiments grow. A cell whose numbers this run's result
does not hold says so ("not in this run") instead of failing the build, and a table whose
experiment has not run at all is replaced by one sentence saying which command makes it.
"""
import json
import os

from minishare.experiments import book_cells, claims as ledger, plan, registry, scorecard
from minishare.experiments.book_cells import made_before


def said(figures, claim_id):
    """The ledger's sentence for one claim (``book/figures/claims.json``)."""
    path = os.path.join(figures, "claims.json")
    if not os.path.exists(path):
        raise book_cells.Missing(path)
    for c in ledger.load(path)["claims"]:
        if c["id"] == claim_id:
            return c["statement"]
    raise book_cells.Missing(claim_id)


def observations(figures, experiment):
    """The experiment's observations (``observations(result)``: facts read off one model at a
    time, such as whether it learned) of the committed result; [] without one."""
    path = os.path.join(figures, experiment, "result.json")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return registry.get(experiment).observations(json.load(f)["result"])


def claims_block(figures, experiment):
    """Markdown: what this run shows for one experiment, the ledger's sentences, with its no-model
    baselines first; one line saying so when the ledger has nothing for it."""
    path = os.path.join(figures, "claims.json")
    found = ledger.load(path) if os.path.exists(path) else {"claims": [], "baselines": []}
    statements = [c["statement"] for c in found["claims"] if c["experiment"] == experiment]
    base = [b for b in found["baselines"] if b["experiment"] == experiment]
    lines = []
    if base:
        lines += [ledger.baseline_line(base), ""]
    notes = observations(figures, experiment)
    if notes:
        lines += ["Observed in this run (facts of each model alone):", ""] + [f"- {n}" for n in notes] + [""]
    against = scorecard.against(experiment, scorecard_rows(figures))
    if against:
        lines += [against, ""]
    if statements:
        lines += ["Paired by seed (a seed fixes the data order, the held-out set and the initialization of "
                  "every arm); an effect shows only where its 95% interval excludes zero, after Holm's "
                  "correction over the experiment's primary comparisons:", ""]
        lines += [f"- {t}" for t in statements]
    return "\n".join(lines) + "\n" if lines else f"*The ledger holds no comparison of `{experiment}` in this checkout.*\n"


def scorecard_rows(figures):
    """The scorecard's rows (``minishare.experiments.scorecard``) of the committed plan, ledger
    and explanations; [] where the plan or the ledger is missing."""
    written, path = plan.load(figures), os.path.join(figures, "claims.json")
    if written is None or not os.path.exists(path):
        return []
    return scorecard.rows(written, ledger.load(path), scorecard.load_explanations(figures))


def scorecard_page(figures):
    """Markdown: how many of the papers' claims the run reproduced, and the table, one row each."""
    rows = scorecard_rows(figures)
    if not rows:
        return "*No plan and ledger in this checkout: run `python -m minishare reproduce --out book/figures`.*\n"
    n = scorecard.counts(rows)
    summary = ", ".join(f"{count} {outcome}" for outcome, count in n.items() if count)
    older = sorted({made_before(loaded[0]) for name in registry.experiments()
                    for loaded in [load(figures, name)] if loaded is not None} - {""})
    return (f"{len(rows)} primary comparisons, planned before the run (`book/figures/plan.json`): {summary}."
            + "".join(f" **{sentence}**" for sentence in older) + "\n\n" + scorecard.table(rows) + "\n")


def load(figures, experiment):
    path = os.path.join(figures, experiment, "result.json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        saved = json.load(f)
    return saved.get("settings", {}), saved["result"]


def tables(figures):
    """{name: Markdown} of every table the chapters include: each experiment writes its own
    (``book_tables``) from its committed result; one that has not run says which command makes it."""
    out = {}
    for name, experiment in registry.experiments().items():
        loaded = load(figures, name)
        if loaded is None:
            out.update(dict.fromkeys(experiment.book_table_names, book_cells.not_run(name)))
        else:
            out.update(experiment.book_tables(loaded[1], loaded[0], lambda cid: said(figures, cid)))
    return out
