"""The ledger of claims: every sentence the report, the chapters and the notebooks say about a
comparison of trained models is one record here, and the sentence is rendered from the record.

An experiment's ``claims(result, settings)`` returns ``compare(...)`` records (the per-seed values
of two arms and what is being compared); ``finish`` applies Holm's correction over the
comparisons each experiment declares primary, decides every verdict and writes each statement.
A comparison that is not primary is exploratory: nothing corrects it for the many such
comparisons, so its statement begins "Exploratory" wherever it is printed, and it never stands for
a paper's claim (the scorecard, ``scorecard``, reads primary comparisons only).
``reproduce`` keeps them, with every experiment's no-model baselines, in ``OUT/claims.json``
(``book/figures/claims.json`` for the book). ``problems`` is the rule a test holds the ledger
to: no statement says an effect shows while its interval includes zero.
"""
import json

from minishare.experiments import stats
from minishare.files import atomic_write

VERDICTS = ("a better", "b better", "cannot tell")


def compare(id, experiment, what, metric, better, arm_a, arm_b, seeds, a, b, paper=None, primary=False,
            digits=3, unit="", over="seeds", says="is better", gate=True):
    """One claim: ``arm_a`` against ``arm_b`` on ``metric`` (``better``: "lower" or "higher"),
    with their per-seed values ``a`` and ``b`` in the order of ``seeds``; ``what`` names the
    comparison in a sentence ("held-out MLM loss, all-shared against not-shared"); ``paper``: what
    the paper claims, with its number, or None. ``primary``: one of the comparisons the experiment
    was designed to make (Holm's correction runs over these). ``over``: what pairs the values
    ("seeds"; "rounds" for a timing whose rounds ran every arm once). ``says``: the words a verdict
    puts after the winning arm, for a comparison that measures no quality ("ponders longer", with
    ``better="higher"``). ``gate``: True to compare only where both arms beat the no-model baselines
    of ``metric`` (``finish``); False for a model set against a baseline itself (chance); for a
    metric that has no baseline of its own (the smoothness of Figure 1's curves), the metric that
    decides whether the same models learned: {"metric", "what" (its name in a sentence), "better",
    "a", "b"}, per-seed values as above."""
    if len(a) != len(seeds) or len(b) != len(seeds):
        raise ValueError(f"claim {id!r}: one value per seed on both sides ({len(seeds)} {over}; got "
                         f"{len(a)} and {len(b)})")
    p = stats.paired(a, b, over)
    return {"id": id, "experiment": experiment, "what": what, "metric": metric, "better": better,
            "arm_a": arm_a, "arm_b": arm_b, "seeds": list(seeds), "a": [float(x) for x in a],
            "b": [float(x) for x in b], "difference": p["difference"], "interval": p["interval"],
            "p": p["p"], "detectable": p["detectable"], "method": p["method"], "paper": paper,
            "primary": bool(primary), "digits": digits, "unit": unit, "says": says,
            "gated": gate is not False, "verdict": None, "statement": None,
            **({"gate": dict(gate)} if isinstance(gate, dict) else {})}


def finish(claims, baselines=()):
    """Holm over each experiment's primary claims, then every verdict and statement. Returns the
    claims (new dicts), in the order given. A claim whose metric has a no-model baseline in
    ``baselines`` compares its arms only where both beat the best of them on average; otherwise
    its verdict is "cannot tell" and its statement says which arm did not."""
    done = [dict(c) for c in claims]
    for c in done:
        c["baseline"] = best_baseline(c, baselines)
    for experiment in {c["experiment"] for c in done}:
        primary = [c for c in done if c["experiment"] == experiment and c["primary"]]
        for c, shows in zip(primary, stats.holm([c["p"] for c in primary])):
            c["holm"] = {"m": len(primary), "rejected": shows}
    for c in done:
        shows = c["holm"]["rejected"] if "holm" in c else None
        if c["baseline"] is not None and c["baseline"]["unbeaten_by"]:
            shows = False
        c["verdict"] = stats.verdict(c, c["better"], shows=shows)
        c["statement"] = statement(c)
    return done


def best_baseline(c, baselines):
    """The best no-model baseline of a claim's experiment and metric (its ``gate``'s metric, where
    it names one), and the arms whose mean does not beat it (None when the metric has none)."""
    on = c.get("gate", c)
    own = [b for b in baselines if b["experiment"] == c["experiment"] and b["metric"] == on["metric"]]
    if not own or not c.get("gated", True):
        return None
    pick = min if on["better"] == "lower" else max
    best = pick(own, key=lambda b: b["value"])
    beats = (lambda v: v < best["value"]) if on["better"] == "lower" else (lambda v: v > best["value"])
    unbeaten = [arm for arm, values in ((c["arm_a"], on["a"]), (c["arm_b"], on["b"]))
                if not beats(sum(values) / len(values))]
    return {"name": best["name"], "value": best["value"], "unbeaten_by": unbeaten}


EXPLORATORY = "Exploratory (not corrected for multiplicity, not a test of a paper's claim): "


def statement(c):
    """The sentence printed for a claim, e.g. "Held-out MLM loss, all-shared against not-shared:
    all-shared − not-shared = +0.085 (95% interval +0.031 to +0.139; paired t over 5 seeds);
    not-shared is better." A comparison that is not primary gets ``EXPLORATORY`` in front."""
    return ("" if c["primary"] else EXPLORATORY) + _sentence(c)


def _sentence(c):
    k, u = c["digits"], c["unit"]
    numbers = f"{c['arm_a']} − {c['arm_b']} = {c['difference']:+.{k}f}{u}"
    if c["interval"] is None:
        return f"{c['what']}: {numbers} with one seed; the run cannot tell (it needs two seeds or more)."
    low, high = c["interval"]
    numbers += f" (95% interval {low:+.{k}f} to {high:+.{k}f}{u}; {c['method'].split(',')[0]})"
    if c["verdict"] == "a better":
        return f"{c['what']}: {numbers}; {c['arm_a']} {c['says']}.{_holm_note(c)}"
    if c["verdict"] == "b better":
        return f"{c['what']}: {numbers}; {c['arm_b']} {c['says']}.{_holm_note(c)}"
    base = c.get("baseline")
    if base and base["unbeaten_by"]:
        of = f" of {c['gate']['what']}" if "gate" in c else ""
        value = f"{base['value']:.3f}" if "gate" in c else f"{base['value']:.{k}f}{u}"
        return (f"{c['what']}: {numbers}; not compared, because {' and '.join(base['unbeaten_by'])} "
                f"{'does' if len(base['unbeaten_by']) == 1 else 'do'} not beat the no-model baseline{of} "
                f"({base['name']}, {value}) on average.")
    why = ("the interval includes zero" if not stats.excludes_zero(c["interval"])
           else f"the interval excludes zero, but not after Holm's correction over {c['holm']['m']} primary comparisons")
    return (f"{c['what']}: {numbers}; the run cannot tell ({why}; it would have shown a difference of "
            f"about {c['detectable']:.{k}f}{u} or more).")


def _holm_note(c):
    return f" (Holm over {c['holm']['m']} primary comparisons.)" if c.get("holm") and c["holm"]["m"] > 1 else ""


def baseline(experiment, metric, name, value):
    """A no-model baseline of an experiment's task, printed beside its models."""
    return {"experiment": experiment, "metric": metric, "name": name, "value": float(value)}


def baseline_line(baselines):
    """An experiment's no-model baselines as one sentence, printed beside its models."""
    return "No-model baselines: " + "; ".join(f"{b['name']} {b['value']:.3f} ({b['metric']})" for b in baselines) + "."


def problems(ledger):
    """What is wrong with a ledger ({"claims": [...], "baselines": [...]}): a list of sentences,
    empty when every verdict and statement agrees with its numbers."""
    out = []
    for c in ledger.get("claims", []):
        name = c.get("id", "?")
        if c.get("verdict") not in VERDICTS:
            out.append(f"{name}: verdict {c.get('verdict')!r} is not one of {VERDICTS}")
            continue
        recomputed = stats.paired(c["a"], c["b"])
        if abs(recomputed["difference"] - c["difference"]) > 1e-9:
            out.append(f"{name}: difference {c['difference']} is not the mean of a − b ({recomputed['difference']})")
        shows = c["verdict"] != "cannot tell"
        if shows and not stats.excludes_zero(c.get("interval")):
            out.append(f"{name}: says {c['verdict']!r} while its interval {c.get('interval')} includes zero")
        if shows and (c.get("baseline") or {}).get("unbeaten_by"):
            out.append(f"{name}: says {c['verdict']!r} although {c['baseline']['unbeaten_by']} do not beat "
                       f"the baseline {c['baseline']['name']}")
        if shows and c.get("holm") and not c["holm"]["rejected"]:
            out.append(f"{name}: says {c['verdict']!r} although Holm's correction does not reject")
        said_better = f" {c.get('says', 'is better')}." in (c.get("statement") or "")
        if said_better != shows:
            out.append(f"{name}: statement {c.get('statement')!r} does not match verdict {c['verdict']!r}")
        if (c.get("statement") or "").startswith(EXPLORATORY) == bool(c.get("primary")):
            out.append(f"{name}: a {'primary' if c.get('primary') else 'secondary'} comparison "
                       f"{'labelled' if c.get('primary') else 'not labelled'} exploratory")
    return out


def write(path, claims, baselines):
    ledger = {"claims": claims, "baselines": baselines}
    trouble = problems(ledger)
    if trouble:
        raise ValueError("the ledger contradicts its numbers: " + "; ".join(trouble))
    with atomic_write(path) as f:
        json.dump(ledger, f, indent=1)
    return path


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)
