"""``python -m minishare reproduce``: run every experiment and write ``OUT/report.md`` with its
figures (PNG and SVG) beside it.

Each experiment is a module with ``run(out, settings) -> result`` (plain JSON data),
``figures(result, folder)`` and ``report(result, figures) -> Markdown``. Results are cached in
``OUT/<experiment>/result.json`` with the settings they were made with, so running again only
redraws; ``--only NAME`` runs one experiment and the report still includes every cached one.
"""
import json
import os

from minishare.experiments import exp_albert, exp_layerwise, exp_lm, exp_memory, exp_params, exp_plans, exp_sop_nsp, exp_takase
from minishare.experiments.settings import FULL, QUICK
from minishare.files import atomic_write

EXPERIMENTS = {
    "params": ("Parameter counts", exp_params),
    "plans": ("The sharing plans", exp_plans),
    "albert_sharing": ("Convergence of ALBERT's sharing variants", exp_albert),
    "layerwise": ("Layer-to-layer transitions (ALBERT Figure 1)", exp_layerwise),
    "sop_nsp": ("SOP against NSP (ALBERT Table 5 layout)", exp_sop_nsp),
    "takase": ("Takase & Kiyono: Sequence, Cycle, Cycle (rev)", exp_takase),
    "lm": ("Takase & Kiyono's strategies on language modelling", exp_lm),
    "memory": ("Memory and time: sharing saves memory, not compute", exp_memory),
}


def run(out, quick=False, only=None, progress=True):
    """Run (or load) the experiments and write the report; returns the report's path."""
    unknown = sorted(set(only or ()) - set(EXPERIMENTS))
    if unknown:
        raise ValueError(f"unknown experiment(s) {', '.join(unknown)}; choose from {', '.join(EXPERIMENTS)}")
    settings = QUICK if quick else FULL
    os.makedirs(out, exist_ok=True)
    sections = []
    for name, (title, module) in EXPERIMENTS.items():
        folder = os.path.join(out, name)
        result = _cached(folder, settings)
        if only is None or name in only:
            if result is None:
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
