"""``python -m minishare reproduce``: run every experiment and write ``OUT/report.md`` with its
figures (PNG and SVG) beside it.

The experiments are the registry's (``registry``: every ``exp_*.py`` of this package, and any
module handed to ``registry.register``); what each provides is written down in ``experiment``.
The pipeline first trains all the runs the experiments request, stage by stage, ``jobs`` at a
time in worker processes (``runs.train_all``); then the experiments that train in their own process
(``trains_here``) run side by side, ``jobs`` at a time, one worker each; then every other ``run``,
one after another: it finds its trainings cached, and timings it measures itself do not share the
CPU with a training.
Results are cached in ``OUT/<experiment>/result.json`` under the settings the experiment declares
it reads (``experiment.View.key``), so running again only redraws, and a change to one
experiment's settings retrains that experiment alone; ``--only NAME`` runs one experiment, and the
report and the ledger keep what they said of every other one (``_earlier``). The claims and baselines of every experiment in the report
go to ``OUT/claims.json``, the ledger the book and the notebooks render their sentences from; where
``OUT/plan.json`` holds the plan written before the run (``plan``), a ledger whose primary
comparisons differ from it is refused.
"""
import json
import os

from minishare.errors import InvalidValue
from minishare.experiments import claims, plan, registry, runs
from minishare.experiments.experiment import key_matches
from minishare.experiments.settings import FULL, LONG, QUICK
from minishare.files import atomic_write
from minishare.run.errors import TrainingInterrupted


def run(out, quick=False, only=None, progress=True, jobs=1, long=False, estimate_only=False):
    """Run (or load) the experiments and write the report; returns the report's path. ``quick``,
    the default or ``long``: the tier (``settings``). ``jobs``: how many training runs train at
    once (one process each, one BLAS thread each). ``estimate_only``: print the estimate of what is
    left to train and return None."""
    if quick and long:
        raise InvalidValue("choose one tier: quick or long, not both")
    experiments = registry.experiments()
    for name in only or ():
        registry.get(name)          # an unknown name: one error listing the known ones
    settings = QUICK if quick else LONG if long else FULL
    os.makedirs(out, exist_ok=True)
    todo = [name for name, e in experiments.items() if (only is None or name in only)
            and _cached(os.path.join(out, name), e.settings(settings)) is None]
    here = None                         # seconds of the training the experiments do themselves
    while True:       # in stages: an experiment may ask for runs that depend on runs it asked for before
        wanted = requests(todo, settings, out)
        missing = {name: r for name, r in wanted.items() if not runs.is_cached(out, name, r)}
        if (progress and not settings.quick or estimate_only) and here is None:
            each = [runs.estimate_here(experiments[name].trains_here(experiments[name].settings(settings)))
                    for name in todo]
            # side by side (``_run_side_by_side``), they take the longest one's time or their share of the cores
            here = max(max(each, default=0.0), sum(each) / jobs) if jobs > 1 else sum(each)
            # and the runs a later stage will ask for (exp_takase's comparison, after its search)
            later = {n: r for name in todo for n, r in experiments[name].later_requests(
                experiments[name].settings(settings), out).items() if n not in wanted}
            charged = {**missing, **later}
            seconds, shapes = runs.estimate(charged, jobs, out=out, progress=True) if charged else (0.0, 0)
            print(f"[reproduce] {len(charged)} training runs to make: about {seconds / 60:.0f} minutes with "
                  f"{jobs} job(s), then about {here / 60:.0f} minutes of training in the experiments' own process; "
                  f"about {(seconds + here) / 60:.0f} minutes in all (timed on this machine: {shapes} models of "
                  "the runs and each kind the experiments train, a few steps each; evaluations and timings not "
                  "counted; the runs a later stage asks for counted as stand-ins of their cost)", flush=True)
            if estimate_only:
                return None
        if not missing:
            break
        runs.train_all(out, wanted, jobs=jobs, progress=progress)
    ran = _run_side_by_side([n for n in todo if _trains_here(experiments[n], settings)], settings, out, jobs,
                            progress)
    sections, found_by = {}, {}
    for name, experiment in experiments.items():
        folder = os.path.join(out, name)
        view = experiment.settings(settings)
        result = _cached(folder, view)
        if name in todo:
            if name in ran:
                result = ran[name]
            else:
                if progress:
                    print(f"[reproduce] {name}: running", flush=True)
                result = json.loads(json.dumps(experiment.run(out, view, progress=progress)))
            _write_json(os.path.join(folder, "result.json"), {"settings": view.key(), "result": result})
        if result is None:
            continue
        figs = experiment.figures(result, folder)
        found_by[name] = ledger_of(experiment, result, settings)
        sections[name] = (experiment.title, figs, experiment.report(result, figs), experiment.observations(result),
                          found_by[name])
    if only is not None:            # the others' parts of the report and the ledger stay as they were
        earlier_texts, earlier = _earlier(out, experiments, set(sections))
        sections = {name: sections.get(name, earlier_texts.get(name)) for name in experiments}
        found_by = {name: found_by.get(name, earlier.get(name)) for name in experiments}
    sections = [section for section in sections.values() if section is not None]
    ledger = {key: [x for found in found_by.values() if found for x in found[key]] for key in ("claims", "baselines")}
    written = plan.load(out)
    if written is not None:
        plan.check(written, ledger["claims"])
    claims.write(os.path.join(out, "claims.json"), ledger["claims"], ledger["baselines"])
    path = os.path.join(out, "report.md")
    _write_text(path, _markdown(sections, settings, out))
    return path


TIERS = {s.tier: s for s in (QUICK, FULL, LONG)}


def _trains_here(experiment, settings):
    """Whether an experiment of this package trains in its own process (``trains_here``), so that
    it can run in a worker beside another such one (one registered from elsewhere cannot: a fresh
    interpreter would not know it)."""
    return experiment.module.__name__.startswith(__package__ + ".exp_") \
        and bool(experiment.trains_here(experiment.settings(settings)))


def _run_one(task):
    """Worker: one experiment's ``run`` (every run it reads is trained), its result as JSON text."""
    name, tier, out = task
    experiment = registry.get(name)
    return json.dumps(experiment.run(out, experiment.settings(TIERS[tier]), progress=False))


def _run_side_by_side(names, settings, out, jobs, progress):
    """{name: result} of the experiments ``names``, which train in their own process: with
    ``jobs`` > 1 they run side by side, one worker (one BLAS thread) each, as the training runs
    did; otherwise nothing here (each runs in this process, in the report's order)."""
    if jobs == 1 or len(names) < 2:
        return {}
    if progress:
        print(f"[reproduce] {', '.join(names)}: running side by side, {min(jobs, len(names))} at a time", flush=True)
    with runs.worker_pool(min(jobs, len(names))) as pool:
        try:
            texts = pool.map(_run_one, [(name, settings.tier, out) for name in names])
        except runs.Stopped as stop:
            raise TrainingInterrupted(stop.signal, None, out, f"interrupted by {stop.signal.name} while "
                                      f"{', '.join(names)} ran; their training is not kept (it runs in "
                                      "their own process): rerunning the same command starts them again") from None
    results = {name: json.loads(text) for name, text in zip(names, texts)}
    for name, result in results.items():     # kept at once: a later experiment's failure loses none of them
        view = registry.get(name).settings(settings)
        _write_json(os.path.join(out, name, "result.json"), {"settings": view.key(), "result": result})
    return results


def requests(names, settings, out=None):
    """Every training run the experiments ``names`` need now: {run name: run_training arguments}.
    Two experiments may share a run (same name), never with different arguments."""
    wanted = {}
    for name in names:
        experiment = registry.get(name)
        for run_name, request in experiment.requests(experiment.settings(settings), out).items():
            if run_name in wanted and wanted[run_name] != request:
                raise InvalidValue(f"experiment {name!r} requests run {run_name!r} with other arguments "
                                   "than another experiment: give one of them another name")
            wanted[run_name] = request
    return wanted


def _cached(folder, view):
    path = os.path.join(folder, "result.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        saved = json.load(f)
    return saved["result"] if key_matches(saved.get("settings", {}), view) else None


def ledger_of(experiment, result, settings):
    """{"claims", "baselines"} of one experiment's result (an ``Experiment``, or its name): its
    comparisons with their verdicts decided (Holm over the primary ones) and its no-model
    baselines."""
    if isinstance(experiment, str):
        experiment = registry.get(experiment)
    view = experiment.settings(settings)
    base = experiment.baselines(result, view)
    return {"claims": claims.finish(experiment.claims(result, view.seeds), base), "baselines": base}


def _earlier(out, experiments, made):
    """What ``out``'s last report and ledger say of the experiments not ``made`` in this run:
    ({name: its section of report.md, as text}, {name: {"claims", "baselines"}}). ``--only NAME``
    keeps them as they are, so that running one experiment changes its own part of the book alone,
    even where another's committed result was made under settings that have changed since."""
    others = [name for name in experiments if name not in made]
    path = os.path.join(out, "claims.json")
    ledger = claims.load(path) if os.path.exists(path) else {"claims": [], "baselines": []}
    found = {name: {key: [x for x in ledger[key] if x["experiment"] == name] for key in ("claims", "baselines")}
             for name in others}
    texts, path = {}, os.path.join(out, "report.md")
    if os.path.exists(path):
        headings, current = {f"## {experiments[name].title}": name for name in others}, None
        with open(path, encoding="utf-8") as f:
            for line in f.read().split("\n"):
                if line.startswith("## "):         # every section starts with its experiment's title
                    current = headings.get(line)
                if current is not None:
                    texts.setdefault(current, []).append(line)
    return {name: "\n".join(lines).rstrip("\n") + "\n" for name, lines in texts.items()}, found


def _markdown(sections, settings, out):
    lines = ["# minishare: the papers' claims, measured at small scale", "",
             f"Settings: {'quick (CI)' if settings.quick else 'long' if settings == LONG else 'full'} run; every model is tiny and trained on "
             "2 CPU cores, so the figures show the direction of the papers' effects where it is visible, "
             "and say so where it is not.", ""]
    if settings.quick:
        lines += ["**The quick tier is a smoke test:** tiny models, a few dozen updates, two seeds. It shows that "
                  "every experiment runs end to end; nothing in it is a result, and most comparisons below are "
                  "not compared because the models have not beaten the no-model baselines. The book's numbers "
                  "are the full run's (`python -m minishare reproduce`, committed in `book/figures`).", ""]
    for section in sections:
        if isinstance(section, str):           # kept from the last report (``_earlier``)
            lines += [section]
            continue
        title, figs, text, notes, found = section
        lines += [f"## {title}", "", text, ""]
        if found["baselines"]:
            lines += [claims.baseline_line(found["baselines"]), ""]
        for caption, paths in figs:
            png = next(p for p in paths if p.endswith(".png"))
            lines += [f"![{caption}]({os.path.relpath(png, out)})", f"*{caption}*", ""]
        notes = notes + [c["statement"] for c in found["claims"]]
        if notes:
            lines += ["What this run shows:", ""] + [f"- {n}" for n in notes] + [""]
    return "\n".join(lines)


def _write_text(path, text):
    with atomic_write(path) as f:
        f.write(text)


def _write_json(path, data):
    _write_text(path, json.dumps(data, indent=1))
