"""Experiment "layerwise": ALBERT's Figure 1, the L2 distance and the angle between the input and
the output of every layer, for a not-shared and an all-shared model trained on the embedded corpus,
with the same two models untrained as a control."""
import os

from minishare import random as ms_random
from minishare.analysis import layerwise, plots
from minishare.experiments.common import build_model, make_config, make_task
from minishare.experiments.exp_albert import albert_request, albert_run


def run(out, settings, progress=True):
    result = {}
    for sharing in ("not-shared", "all-shared"):
        trained = albert_run(out, settings, sharing, progress=progress)["model"]
        request = albert_request(settings, sharing)
        task, V = make_task("pretrain", request["seed"], settings.batch_size, settings.seq_len,
                            tokenizer_path=os.path.join(out, "runs", f"albert-{sharing}-sop", "tokenizer.json"),
                            vocab_size=settings.vocab_size)
        batches = task.eval_sets["sop"]
        ms_random.manual_seed(request["seed"])
        untrained = build_model("pretrain", make_config("pretrain", V, overrides=request["overrides"],
                                                        seq_len=settings.seq_len))
        result[f"{sharing} (trained)"] = layerwise.layer_transitions(trained, batches)
        result[f"{sharing} (untrained)"] = layerwise.layer_transitions(untrained, batches)
    return result


def figures(result, folder):
    return [("Input-to-output L2 distance and angle of each layer (ALBERT Figure 1, small scale)",
             plots.save_figure(plots.plot_layer_transitions(result), f"{folder}/layerwise"))]


def report(result, figs):
    lines = ["Definition (the paper gives none): for layer l with input h_l and output h_(l+1), the "
             "L2 distance ‖h_(l+1) − h_l‖ and the angle arccos cos(h_l, h_(l+1)) in degrees, each "
             "averaged over every non-padding token of the held-out SOP batches.", "",
             "| model | L2 by layer | angle (degrees) by layer |", "|---|---|---|"]
    for name, r in result.items():
        lines.append(f"| {name} | {' '.join(f'{v:.2f}' for v in r['l2'])} | "
                     f"{' '.join(f'{v:.1f}' for v in r['cosine_degrees'])} |")
    return "\n".join(lines)


def observations(result):
    def spread(values):
        return max(values) - min(values)
    notes = []
    for sharing in ("not-shared", "all-shared"):
        r = result[f"{sharing} (trained)"]
        notes.append(f"{sharing} (trained): L2 from {r['l2'][0]:.2f} to {r['l2'][-1]:.2f}, angle from "
                     f"{r['cosine_degrees'][0]:.1f}° to {r['cosine_degrees'][-1]:.1f}° "
                     f"(spread across layers {spread(r['cosine_degrees']):.1f}°).")
    smoother = spread(result["all-shared (trained)"]["cosine_degrees"]) < spread(result["not-shared (trained)"]["cosine_degrees"])
    notes.append("The all-shared model's transitions vary less from layer to layer than the not-shared "
                 "model's, the paper's 'smoother' finding." if smoother else
                 "At this scale the all-shared model's transitions are not smoother than the not-shared "
                 "model's; the paper's Figure 1 is for 24-layer models trained for 125k steps.")
    return notes
