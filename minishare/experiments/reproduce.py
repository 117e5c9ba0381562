"""``python -m minishare reproduce``: run every experiment and write ``OUT/report.md`` with its
figures (PNG and SVG) beside it.

Each experiment is a module with ``run(out, settings) -> result`` (plain JSON data),
``figures(result, folder)`` and ``report(result, figures) -> Markdown``, optionally
``observations(result) -> [sentences]`` (facts read off the result), ``claims(result, seeds) ->
[claims.compare(...)]`` (every comparison of trained arms it reports, see ``claims``),
``baselines(result, settings) -> [claims.baseline(...)]`` (the no-model baselines of its task) and
``requests(settings) -> {run name: run_training arguments}``, every training run it needs
(``STAGED``: ``requests(settings, out)``, which asks for more once its first runs are done). The
pipeline first trains all the runs the experiments request, stage by stage, ``jobs`` at a time in
worker processes (``runs.train_all``), then calls each ``run``
one after another: ``run`` finds its trainings cached, and timings it measures itself do not share
the CPU with a training. Results are cached in ``OUT/<experiment>/result.json`` with the settings
of the settings they read (``Reads``), so running again only redraws, and a change to one
experiment's settings retrains that experiment alone; ``--only NAME`` runs one experiment and the
report still includes every cached one. The claims and baselines of every experiment in the report
go to ``OUT/claims.json``, the ledger the book and the notebooks render their sentences from.
"""
import dataclasses
import json
import os

from minishare.errors import InvalidValue
from minishare.experiments import (exp_act, exp_albert, exp_communication, exp_embedding_size, exp_flops,
                                   exp_gradnorms, exp_layerwise, exp_lm, exp_looped, exp_memory, exp_mor,
                                   exp_params, exp_plans, exp_regularizer, exp_relaxed, exp_sop_nsp, exp_takase,
                                   exp_tying)
from minishare import data
from minishare.experiments import claims, runs
from minishare.experiments.settings import FULL, LONG, QUICK
from minishare.files import atomic_write

EXPERIMENTS = {
    "params": ("Parameter counts", exp_params),
    "plans": ("The sharing plans", exp_plans),
    "albert_sharing": ("Convergence of ALBERT's sharing variants", exp_albert),
    "layerwise": ("Layer-to-layer transitions (ALBERT Figure 1)", exp_layerwise),
    "sop_nsp": ("SOP against NSP (ALBERT Table 5 layout)", exp_sop_nsp),
    "embedding_size": ("Held-out loss against the embedding size E (ALBERT Table 3)", exp_embedding_size),
    "tying": ("Tied against untied output layer", exp_tying),
    "regularizer": ("Sharing as a regularizer: the train/held-out gap", exp_regularizer),
    "takase": ("Takase & Kiyono: Sequence, Cycle, Cycle (rev)", exp_takase),
    "lm": ("Takase & Kiyono's strategies on language modelling", exp_lm),
    "memory": ("Memory and time: sharing saves memory, not compute", exp_memory),
    "flops": ("FLOPs per token beside parameters", exp_flops),
    "communication": ("Communication: what data-parallel training sends per step", exp_communication),
    "gradnorms": ("Gradient norms by layer position: Post-LN against Pre-LN, shared stacks", exp_gradnorms),
    "act": ("The Universal Transformer with Adaptive Computation Time: ponder time per token", exp_act),
    "looped": ("Looped depth: more iterations at test time on harder inputs", exp_looped),
    "relaxed": ("Convert, don't retrain: a trained model made recursive, relaxed and basis-shared", exp_relaxed),
    "mor": ("Tokens that choose their depth: Mixture-of-Recursions beside ACT", exp_mor),
}


def run(out, quick=False, only=None, progress=True, jobs=1, long=False):
    """Run (or load) the experiments and write the report; returns the report's path. ``quick``,
    the default or ``long``: the tier (``settings``). ``jobs``: how many training runs train at
    once (one process each, one BLAS thread each)."""
    if quick and long:
        raise InvalidValue("choose one tier: quick or long, not both")
    unknown = sorted(set(only or ()) - set(EXPERIMENTS))
    if unknown:
        raise InvalidValue(f"unknown experiment(s) {', '.join(unknown)}; "
                           f"choose from {', '.join(EXPERIMENTS)}")
    settings = QUICK if quick else LONG if long else FULL
    os.makedirs(out, exist_ok=True)
    todo = [name for name, (_, module) in EXPERIMENTS.items() if (only is None or name in only)
            and _cached(os.path.join(out, name), experiment_settings(module, settings)) is None]
    while True:       # in stages: an experiment may ask for runs that depend on runs it asked for before
        wanted = requests(todo, settings, out)
        missing = {name: r for name, r in wanted.items() if not runs.is_cached(out, name, r)}
        if not missing:
            break
        if progress and not settings.quick:
            seconds, shapes = runs.estimate(missing, jobs, out=out, progress=True)
            print(f"[reproduce] {len(missing)} training runs to make; timed on this machine ({shapes} models, a "
                  f"few steps each): about {seconds / 60:.0f} minutes with {jobs} job(s), evaluations and timings "
                  "not counted (a later stage may ask for more)", flush=True)
        runs.train_all(out, wanted, jobs=jobs, progress=progress)
    sections, ledger = [], {"claims": [], "baselines": []}
    for name, (title, module) in EXPERIMENTS.items():
        folder = os.path.join(out, name)
        result = _cached(folder, experiment_settings(module, settings))
        if name in todo:
            if progress:
                print(f"[reproduce] {name}: running", flush=True)
            reads = Reads(experiment_settings(module, settings))
            result = json.loads(json.dumps(module.run(out, reads, progress=progress)))
            _write_json(os.path.join(folder, "result.json"), {"settings": reads.key(), "result": result})
        if result is None:
            continue
        figs = module.figures(result, folder)
        found = ledger_of(module, result, settings)
        ledger["claims"] += found["claims"]
        ledger["baselines"] += found["baselines"]
        sections.append((title, figs, module.report(result, figs), _observations(module, result), found))
    claims.write(os.path.join(out, "claims.json"), ledger["claims"], ledger["baselines"])
    path = os.path.join(out, "report.md")
    _write_text(path, _markdown(sections, settings, out))
    return path


def requests(names, settings, out=None):
    """Every training run the experiments ``names`` need now: {run name: run_training arguments}.
    An experiment with ``STAGED`` takes ``out`` too and may ask for more once the runs it asked for
    are there (``exp_takase``: the comparison's runs after its learning-rate search). Two
    experiments may share a run (same name), never with different arguments."""
    wanted = {}
    for name in names:
        module = EXPERIMENTS[name][1]
        mine = experiment_settings(module, settings)
        asked = {} if not hasattr(module, "requests") else \
            module.requests(mine, out) if getattr(module, "STAGED", False) else module.requests(mine)
        for run_name, request in asked.items():
            if run_name in wanted and wanted[run_name] != request:
                raise InvalidValue(f"experiment {name!r} requests run {run_name!r} with other arguments "
                                   "than another experiment: give one of them another name")
            wanted[run_name] = request
    return wanted


def experiment_settings(module, settings):
    """The settings as ``module`` sees them: an experiment that names another seeds field in
    ``SEEDS`` (``"few_seeds"``: one that describes, with no primary comparison) gets those seeds as
    ``seeds``, for its runs, its cache key and its claims alike."""
    return dataclasses.replace(settings, seeds=getattr(settings, getattr(module, "SEEDS", "seeds")))


class Reads:
    """The settings as one experiment sees them, recording the fields it reads: those fields (with
    ``quick``, ``seeds`` and the data pipeline's version) are the experiment's cache key, so a change
    to a field another experiment reads does not make this one train again."""

    def __init__(self, settings):
        self._settings, self.read = settings, {"quick", "seeds"}

    def __getattr__(self, name):
        value = getattr(self._settings, name)
        self.read.add(name)
        return value

    def key(self):
        full = json.loads(json.dumps(self._settings.key()))
        return {"data_pipeline": data.PIPELINE_VERSION, **{k: full[k] for k in sorted(self.read)}}


def cache_key_matches(saved_key, settings):
    """True when the fields an experiment read (``saved_key``, from ``Reads.key``) have the values
    of ``settings`` now and the data pipeline is the same version. A key without a version was
    made by version 1; one that names a field ``settings`` no longer has never matches."""
    full = json.loads(json.dumps(settings.key()))
    fields = {k: v for k, v in saved_key.items() if k != "data_pipeline"}
    return (saved_key.get("data_pipeline", 1) == data.PIPELINE_VERSION
            and all(k in full and full[k] == v for k, v in fields.items()))


def _cached(folder, settings):
    path = os.path.join(folder, "result.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        saved = json.load(f)
    return saved["result"] if cache_key_matches(saved.get("settings", {}), settings) else None


def _observations(module, result):
    return module.observations(result) if hasattr(module, "observations") else []


def ledger_of(module, result, settings):
    """{"claims", "baselines"} of one experiment's result: its comparisons with their verdicts
    decided (Holm over the primary ones) and its no-model baselines."""
    settings = experiment_settings(module, settings)
    base = module.baselines(result, settings) if hasattr(module, "baselines") else []
    found = claims.finish(module.claims(result, settings.seeds), base) if hasattr(module, "claims") else []
    return {"claims": found, "baselines": base}


def _markdown(sections, settings, out):
    lines = ["# minishare: the papers' claims, measured at small scale", "",
             f"Settings: {'quick (CI)' if settings.quick else 'long' if settings == LONG else 'full'} run; every model is tiny and trained on "
             "2 CPU cores, so the figures show the direction of the papers' effects where it is visible, "
             "and say so where it is not.", ""]
    for title, figs, text, notes, found in sections:
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
