"""Experiment "takase": Takase & Kiyono's strategies on a toy sequence-to-sequence task, in their
two comparisons.

* Equal parameters: Vanilla (M = N = n), Universal (one layer, its FFN widened to Vanilla's
  budget, used at n positions), and Sequence, Cycle and Cycle (rev) with M = n distinct layers at
  N = 2n positions: the same parameters, twice the depth, twice the compute.
* Equal training time: every model gets the wall-clock time Vanilla used; a slower model takes
  proportionally fewer steps.
"""
import statistics

from minishare.analysis import count_parameters, plots
from minishare.data import seq2seq
from minishare.experiments.exp_params import universal_ffn_size
from minishare.experiments.runs import cached_run
from minishare.models import TransformerConfig

METHODS = ("Vanilla", "Universal", "Sequence", "Cycle", "Cycle (rev)")


def _overrides(settings, vocab_size):
    n = settings.seq2seq["num_hidden_layers"]
    base = {**settings.seq2seq, "vocab_size": vocab_size, "max_position_embeddings": 128}
    vanilla_params = count_parameters(TransformerConfig(**base))
    width = universal_ffn_size(base, n, vanilla_params)
    return {
        "Vanilla": {**settings.seq2seq, "sharing": "not-shared"},
        "Universal": {**settings.seq2seq, "sharing": "universal", "intermediate_size": width},
        "Sequence": {**settings.seq2seq, "sharing": "sequence", "num_unique_layers": n, "num_hidden_layers": 2 * n},
        "Cycle": {**settings.seq2seq, "sharing": "cycle", "num_unique_layers": n, "num_hidden_layers": 2 * n},
        "Cycle (rev)": {**settings.seq2seq, "sharing": "cycle-rev", "num_unique_layers": n, "num_hidden_layers": 2 * n},
    }


def _run(out, settings, method, overrides, steps, tag, progress):
    request = dict(task=settings.seq2seq_task, overrides=overrides, steps=steps, batch_size=64, lr=3e-3,
                   eval_every=max(steps // 6, 1), seed=0)
    name = f"takase-{method.lower().replace(' ', '').replace('(', '-').replace(')', '')}-{tag}"
    return cached_run(out, name, progress, **request)


def _summary(r):
    return {"params": count_parameters(r["model"]), "history": r["history"], "final": r["final"],
            "steps": int(r["history"][-1]["step"]),
            "step_time": statistics.median(row["step_time"] for row in r["history"])}


def run(out, settings, progress=True):
    V = seq2seq.get_task(settings.seq2seq_task).vocab_size
    configs = _overrides(settings, V)
    equal_params = {m: _summary(_run(out, settings, m, configs[m], settings.seq2seq_steps, "params", progress))
                    for m in METHODS}
    budget = equal_params["Vanilla"]["step_time"] * settings.seq2seq_steps
    equal_time = {"Vanilla": equal_params["Vanilla"]}
    for m in METHODS[1:]:
        steps = max(10, round(budget / equal_params[m]["step_time"]))
        equal_time[m] = _summary(_run(out, settings, m, configs[m], steps, "time", progress))
    return {"task": settings.seq2seq_task, "equal_params": equal_params, "equal_time": equal_time,
            "budget_seconds": budget}


def figures(result, folder):
    return [
        (f"Equal parameters: training loss on '{result['task']}' against step (held-out loss as markers)",
         plots.save_figure(plots.plot_convergence({m: r["history"] for m, r in result["equal_params"].items()}, x="step"),
                           f"{folder}/takase_equal_params")),
        ("Equal training time: the same comparison against wall-clock seconds",
         plots.save_figure(plots.plot_convergence({m: r["history"] for m, r in result["equal_time"].items()}, x="wall_clock"),
                           f"{folder}/takase_equal_time")),
    ]


def report(result, figs):
    vanilla_time = result["equal_params"]["Vanilla"]["step_time"]
    lines = []
    for title, key in (("Equal parameters", "equal_params"), ("Equal training time", "equal_time")):
        lines += [f"**{title}** (task: {result['task']})", "",
                  "| method | parameters | steps | speed vs Vanilla | held-out loss | exact match |",
                  "|---|---|---|---|---|---|"]
        for m, r in result[key].items():
            f = r["final"]
            lines.append(f"| {m} | {r['params']:,} | {r['steps']} | {vanilla_time / r['step_time']:.2f} | "
                         f"{f.get('eval_loss', float('nan')):.3f} | {f.get('eval_exact_match', float('nan')):.3f} |")
        lines.append("")
    return "\n".join(lines)


def observations(result):
    notes = []
    for title, key in (("equal parameters", "equal_params"), ("equal training time", "equal_time")):
        finals = {m: r["final"].get("eval_loss", float("inf")) for m, r in result[key].items()}
        exact = {m: r["final"].get("eval_exact_match", 0.0) for m, r in result[key].items()}
        best = min(finals, key=finals.get)
        if best == "Vanilla":
            verdict = ("Vanilla is best: at this scale and training budget, reusing its layers at "
                       "more positions does not pay off (the paper's gains are on WMT, trained far longer)")
        elif finals["Vanilla"] - finals[best] > 0.01 * finals["Vanilla"]:
            verdict = f"{best} is best, {finals['Vanilla'] - finals[best]:.3f} below Vanilla, as in the paper"
        else:
            verdict = "No method differs from Vanilla by more than 1%"
        notes.append(f"At {title}: held-out loss " + ", ".join(f"{m} {v:.3f}" for m, v in finals.items())
                     + "; exact match " + ", ".join(f"{m} {v:.2f}" for m, v in exact.items()) + f". {verdict}.")
    ep = result["equal_params"]
    notes.append(f"Doubling depth at equal parameters doubles compute: Cycle's step takes "
                 f"{ep['Cycle']['step_time'] / ep['Vanilla']['step_time']:.2f}× Vanilla's (the paper: speed 0.63 at N = 12).")
    return notes
