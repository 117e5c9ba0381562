"""``python -m minishare reproduce``: run every experiment and write ``OUT/report.md`` with its
figures (PNG and SVG) beside it.

Each experiment is a module with ``run(out, settings) -> result`` (plain JSON data),
``figures(result, folder)`` and ``report(result, figures) -> Markdown``, optionally
``observations(result) -> [sentences]`` and ``requests(settings) -> {run name: run_training
arguments}``, every training run it needs. The pipeline first trains all the runs the experiments
request, ``jobs`` at a time in worker processes (``runs.train_all``), then calls each ``run``
one after another: ``run`` finds its trainings cached, and timings it measures itself do not share
the CPU with a training. Results are cached in ``OUT/<experiment>/result.json`` with the settings
they were made with, so running again only redraws; ``--only NAME`` runs one experiment and the
report still includes every cached one.
"""
import json
import os

from minishare.errors import InvalidValue
from minishare.experiments import (exp_act, exp_albert, exp_communication, exp_embedding_size, exp_flops,
                                   exp_gradnorms, exp_layerwise, exp_lm, exp_memory, exp_params, exp_plans,
                                   exp_regularizer, exp_sop_nsp, exp_takase, exp_tying)
from minishare.experiments import runs
from minishare.experiments.settings import FULL, QUICK
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
}


def run(out, quick=False, only=None, progress=True, jobs=1):
    """Run (or load) the experiments and write the report; returns the report's path. ``jobs``:
    how many training runs train at once (one process each, one BLAS thread each)."""
    unknown = sorted(set(only or ()) - set(EXPERIMENTS))
    if unknown:
        raise InvalidValue(f"unknown experiment(s) {', '.join(unknown)}; "
                           f"choose from {', '.join(EXPERIMENTS)}")
    settings = QUICK if quick else FULL
    os.makedirs(out, exist_ok=True)
    todo = [name for name in EXPERIMENTS if (only is None or name in only)
            and _cached(os.path.join(out, name), settings) is None]
    runs.train_all(out, requests(todo, settings), jobs=jobs, progress=progress)
    sections = []
    for name, (title, module) in EXPERIMENTS.items():
        folder = os.path.join(out, name)
        result = _cached(folder, settings)
        if name in todo:
            if progress:
                print(f"[reproduce] {name}: running", flush=True)
            result = json.loads(json.dumps(module.run(out, settings, progress=progress)))
            _write_json(os.path.join(folder, "result.json"), {"settings": settings.key(), "result": result})
        if result is None:
            continue
        figs = module.figures(result, folder)
        sections.append((title, figs, module.report(result, figs), _observations(module, result)))
    path = os.path.join(out, "report.md")
    _write_text(path, _markdown(sections, settings, out))
    return path


def requests(names, settings):
    """Every training run the experiments ``names`` need: {run name: run_training arguments}. Two
    experiments may share a run (same name), never with different arguments."""
    wanted = {}
    for name in names:
        module = EXPERIMENTS[name][1]
        for run_name, request in (module.requests(settings) if hasattr(module, "requests") else {}).items():
            if run_name in wanted and wanted[run_name] != request:
                raise InvalidValue(f"experiment {name!r} requests run {run_name!r} with other arguments "
                                   "than another experiment: give one of them another name")
            wanted[run_name] = request
    return wanted


def _cached(folder, settings):
    path = os.path.join(folder, "result.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        saved = json.load(f)
    return saved["result"] if saved.get("settings") == json.loads(json.dumps(settings.key())) else None


def _observations(module, result):
    return module.observations(result) if hasattr(module, "observations") else []


def _markdown(sections, settings, out):
    lines = ["# minishare: the papers' claims, measured at small scale", "",
             f"Settings: {'quick (CI)' if settings.quick else 'full'} run; every model is tiny and trained on "
             "2 CPU cores, so the figures show the direction of the papers' effects where it is visible, "
             "and say so where it is not.", ""]
    for title, figs, text, notes in sections:
        lines += [f"## {title}", "", text, ""]
        for caption, paths in figs:
            png = next(p for p in paths if p.endswith(".png"))
            lines += [f"![{caption}]({os.path.relpath(png, out)})", f"*{caption}*", ""]
        if notes:
            lines += ["What this run shows:", ""] + [f"- {n}" for n in notes] + [""]
    return "\n".join(lines)


def _write_text(path, text):
    with atomic_write(path) as f:
        f.write(text)


def _write_json(path, data):
    _write_text(path, json.dumps(data, indent=1))
