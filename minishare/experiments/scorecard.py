"""The scorecard: every primary comparison of the plan (``plan``) set against the paper it tests,
one row each, with the paper's words, our numbers and one of five outcomes:

    reproduced          the interval excludes zero in the paper's direction (after Holm)
    cannot tell         the interval includes zero (or Holm keeps it): the row says what it rules out
    reversed            the interval excludes zero the other way
    not compared        an arm did not beat the no-model baselines, so the pair is not judged
    no paper direction  the paper reports no direction for this pair; the row says ours

A reversed or not-compared row needs a reason, written by a person who read the run
(``explanations.json`` beside the ledger: {claim id: {"verdict", "why"}}); the verdict stored with
it makes a reason written for another run fail (``problems``). The book prints the table on its
scorecard page and each chapter's "Against the paper" paragraph from the same rows."""
import json
import os

OUTCOMES = ("reproduced", "cannot tell", "reversed", "not compared", "no paper direction")
NEEDS_REASON = ("reversed", "not compared")


def outcome(claim, direction):
    """The outcome of a finished claim (``claims.finish``) against the paper's ``direction``."""
    if (claim.get("baseline") or {}).get("unbeaten_by"):
        return "not compared"
    if direction is None:
        return "no paper direction"
    if claim["verdict"] == "cannot tell":
        return "cannot tell"
    return "reproduced" if claim["verdict"] == direction else "reversed"


def ruled_out(claim):
    """What a claim that cannot tell still rules out, in one sentence."""
    k, u = claim["digits"], claim["unit"]
    if claim["interval"] is None:
        return "one seed: it rules out nothing."
    low, high = claim["interval"]
    return (f"it rules out {claim['arm_a']} − {claim['arm_b']} below {low:+.{k}f}{u} or above {high:+.{k}f}{u}; "
            f"a true difference under about {claim['detectable']:.{k}f}{u} would usually not show.")


def rows(plan, ledger, explanations):
    """One dict per planned primary comparison found in ``ledger``, in the plan's order: experiment,
    id, what, paper, ours (the ledger's numbers), outcome and reason."""
    found = {c["id"]: c for c in ledger["claims"]}
    out = []
    for name, e in plan["experiments"].items():
        for p in e["primary"]:
            c = found.get(p["id"])
            if c is None:
                continue
            result = outcome(c, p["paper_direction"])
            k, u = c["digits"], c["unit"]
            ours = f"{c['arm_a']} − {c['arm_b']} = {c['difference']:+.{k}f}{u}"
            if c["interval"] is not None:
                ours += f" ({c['interval'][0]:+.{k}f} to {c['interval'][1]:+.{k}f})"
            if result == "cannot tell":
                reason = ruled_out(c)
            elif result == "reproduced":
                reason = f"{c['arm_a'] if c['verdict'] == 'a better' else c['arm_b']} is better, as in the paper."
            elif result == "no paper direction":
                reason = ("ours: " + ruled_out(c)) if c["verdict"] == "cannot tell" else \
                    f"ours: {c['arm_a'] if c['verdict'] == 'a better' else c['arm_b']} {c['says']}."
            else:
                reason = explanations.get(p["id"], {}).get("why", "")
            out.append({"experiment": name, "id": p["id"], "what": c["what"], "paper": p["paper"], "ours": ours,
                        "outcome": result, "reason": reason})
    return out


def problems(rows_, explanations, ledger):
    """Rows that need a reason and have none, and reasons written for another verdict."""
    verdicts = {c["id"]: c["verdict"] for c in ledger["claims"]}
    out = [f"{r['id']}: {r['outcome']} without a reason in explanations.json" for r in rows_
           if r["outcome"] in NEEDS_REASON and not r["reason"]]
    out += [f"{cid}: its reason was written for verdict {e['verdict']!r}, the ledger says {verdicts.get(cid)!r}"
            for cid, e in explanations.items() if verdicts.get(cid) != e["verdict"]]
    return out


def load_explanations(folder):
    path = os.path.join(folder, "explanations.json")
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def table(rows_):
    """The scorecard as a Markdown table."""
    out = ["| claim | the paper | ours | outcome | why |", "|---|---|---|---|---|"]
    for r in rows_:
        cells = (r["what"], r["paper"], r["ours"], f"**{r['outcome']}**", r["reason"])
        out.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    return "\n".join(out)


def counts(rows_):
    """{outcome: number of rows}, every outcome present."""
    return {o: sum(r["outcome"] == o for r in rows_) for o in OUTCOMES}


def against(experiment, rows_):
    """The "Against the paper" paragraph of one experiment: how many of its primary comparisons
    came out the paper's way, and every other row with its reason ("" when it has no row)."""
    mine = [r for r in rows_ if r["experiment"] == experiment]
    if not mine:
        return ""
    reproduced = sum(r["outcome"] == "reproduced" for r in mine)
    missed = [r for r in mine if r["outcome"] != "reproduced"]
    head = (f"**Against the paper.** {reproduced} of this experiment's {len(mine)} primary comparisons "
            "reproduced the paper's direction")
    if not missed:
        return head + "."
    return "\n".join([head + "; the others:", ""] + [f"- *{r['what']}* ({r['outcome']}): {r['reason']}" for r in missed])
