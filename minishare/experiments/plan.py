"""The plan written before a run (``plan.json`` beside the ledger it governs, committed first): for
every experiment, its primary comparisons (arms, metric, the direction the paper reports), its
evaluation seeds, the tuning seeds, what was tuned on which seeds, and the smallest difference
its seeds can detect. Planning before looking is what keeps a paired interval honest: a
comparison chosen after seeing the numbers, or a setting tuned on the seeds it is judged on,
makes a chance difference look like an effect.

The plan of the next run is written beside the committed one as ``plan_next.json`` (``NEXT``) while
the committed ledger still follows the old plan; the commit that starts that run renames it
``plan.json``, so the plan is always in an earlier commit than the results it governs.

``problems(plan)`` checks the plan alone; ``disagreements(plan, claims)`` checks a ledger against
it, and ``reproduce`` refuses to write a ledger into a folder whose plan it contradicts."""
import json
import os

from minishare.errors import InvalidValue

DIRECTIONS = ("a better", "b better", None)      # None: the paper reports no direction for this pair
FIELDS = ("arm_a", "arm_b", "metric", "better")


NEXT = "plan_next.json"


def load(folder, name="plan.json"):
    """The plan in ``folder`` (``folder/plan.json``, or ``name``), or None where there is none."""
    path = os.path.join(folder, name)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def planned(plan):
    """{claim id: its planned record, with "experiment" added} of every primary comparison."""
    return {p["id"]: {**p, "experiment": name} for name, e in plan["experiments"].items() for p in e["primary"]}


def problems(plan):
    """What is wrong with a plan on its own: sentences, empty when nothing is. Tuning seeds must be
    apart from every evaluation seed; a setting tuned on other seeds must say it is pending."""
    out, tuning = [], set(plan["tuning_seeds"])
    for name, e in plan["experiments"].items():
        if tuning & set(e["evaluation_seeds"]):
            out.append(f"{name}: tuning seeds {sorted(tuning & set(e['evaluation_seeds']))} are evaluation seeds")
        for t in e["tuned"]:
            if not set(t["seeds"]) <= tuning and not t["status"].startswith("pending"):
                out.append(f"{name}: {t['setting']} was tuned on seeds {t['seeds']}, not the tuning seeds, "
                           "and is not marked pending")
        for p in e["primary"]:
            if p["paper_direction"] not in DIRECTIONS:
                out.append(f"{p['id']}: paper_direction {p['paper_direction']!r} is not one of {DIRECTIONS}")
    return out


def disagreements(plan, claims):
    """Where a ledger's claims (``claims.finish`` records) differ from the plan: a primary
    comparison the plan lacks or names otherwise, one it plans that the ledger lacks or does not
    make primary, seeds other than the planned ones (fewer only where the comparison's words name
    the seeds a gate left out). An experiment with no claim in the ledger has not run (``--only``)
    and is not asked for."""
    ran = {c["experiment"] for c in claims}
    want, out = {cid: p for cid, p in planned(plan).items() if p["experiment"] in ran}, []
    got = {c["id"]: c for c in claims if c["primary"]}
    for cid in sorted(set(got) - set(want)):
        out.append(f"{cid}: a primary comparison the plan does not name")
    for cid, p in want.items():
        c = got.get(cid)
        if c is None:
            out.append(f"{cid}: planned as primary, missing from the ledger (or not primary there)")
            continue
        changed = [f"{k} {c[k]!r} (planned {p[k]!r})" for k in FIELDS if c[k] != p[k]]
        planned_seeds = plan["experiments"][p["experiment"]]["evaluation_seeds"]
        if not set(c["seeds"]) <= set(planned_seeds) or (c["seeds"] != planned_seeds and "left out" not in c["what"]):
            changed.append(f"seeds {c['seeds']} (planned {planned_seeds}; a seed left out by a gate must be named)")
        if changed:
            out.append(f"{cid}: " + ", ".join(changed))
    return out


def check(plan, claims):
    """Raise ``InvalidValue`` naming every disagreement of ``claims`` with ``plan``."""
    trouble = problems(plan) + disagreements(plan, claims)
    if trouble:
        raise InvalidValue("the ledger does not follow the plan written before the run (plan.json): "
                           + "; ".join(trouble[:5]) + (f"; and {len(trouble) - 5} more" if len(trouble) > 5 else ""))
