"""Experiment "layerwise": ALBERT's Figure 1, the comparison the paper makes. A BERT-style model
(E = H, nothing shared) and an ALBERT-style model (E < H, all-shared), both Post-LN with N >= 12
layers, trained on the embedded corpus over several seeds: the L2 distance and the angle between
the input and the output of every layer, with the same models untrained (seed for seed) as the
control, and the norm of every hidden state, which tells what the first point measures."""
import math
import os

from minishare import random as ms_random
from minishare.analysis import layerwise, plots
from minishare.experiments import exp_albert, stats
from minishare.experiments.common import build_model, make_config, make_task

STYLES = ("BERT-style", "ALBERT-style")


def configs(settings):
    """style -> (sharing, AlbertConfig fields that differ from settings.albert)."""
    N, H = settings.layerwise["num_hidden_layers"], settings.albert["hidden_size"]
    return {"BERT-style": ("not-shared", dict(num_hidden_layers=N, embedding_size=H)),
            "ALBERT-style": ("all-shared", dict(num_hidden_layers=N,
                                                embedding_size=settings.layerwise["embedding_size"]))}


def requests(settings):
    return {name: request for sharing, config in configs(settings).values()
            for name, request in exp_albert.seed_requests(settings, sharing, **config).items()}


def _measure(model, batches):
    return {**layerwise.layer_transitions(model, batches), "norms": layerwise.state_norms(model, batches)}


def run(out, settings, progress=True):
    result = {"H": settings.albert["hidden_size"], "N": settings.layerwise["num_hidden_layers"], "models": {}}
    for style, (sharing, config) in configs(settings).items():
        runs = exp_albert.seed_runs(out, settings, sharing, progress=progress, **config)
        kinds = {"trained": [], "untrained": []}
        for seed, trained in zip(settings.seeds, runs):
            request = exp_albert.albert_request(settings, sharing, seed=seed, **config)
            task, V = make_task("pretrain", seed, settings.batch_size, settings.seq_len,
                                vocab_size=settings.vocab_size)
            batches = task.eval_sets["sop"]
            ms_random.manual_seed(seed)             # the trained model's initialization, untrained
            untrained = build_model("pretrain", make_config("pretrain", V, overrides=request["overrides"],
                                                            seq_len=settings.seq_len))
            kinds["trained"].append(_measure(trained["model"], batches))
            kinds["untrained"].append(_measure(untrained, batches))
        result["models"][style] = {"E": config["embedding_size"], "sharing": sharing,
                                   **{kind: {key: [m[key] for m in ms] for key in ("l2", "cosine_degrees", "norms")}
                                      for kind, ms in kinds.items()}}
    return result


def _title(result):
    m = result["models"]
    return (f"N = {result['N']}, H = {result['H']}, Post-LN; BERT-style E = {m['BERT-style']['E']} not-shared, "
            f"ALBERT-style E = {m['ALBERT-style']['E']} all-shared")


def figures(result, folder):
    series = {f"{style} ({kind})": r[kind] for style, r in result["models"].items() for kind in ("trained", "untrained")}
    return [(f"Input-to-output L2 distance and angle of each layer (ALBERT Figure 1, small scale): {_title(result)}",
             plots.save_figure(plots.plot_layer_transitions(series, title=_title(result)), f"{folder}/layerwise"))]


def _mean_curve(curves):
    return [sum(c) / len(c) for c in zip(*curves)]


def report(result, figs):
    lines = ["Definition (the paper gives none): for layer l with input h_l and output h_(l+1), the "
             "L2 distance ‖h_(l+1) − h_l‖ and the angle arccos cos(h_l, h_(l+1)) in degrees, each "
             "averaged over every non-padding token of the held-out SOP batches; then the mean over "
             f"seeds. {_title(result)}.", "",
             "| model | L2 by layer (mean over seeds) | angle (degrees) by layer | ‖h_l‖, l = 0..N |", "|---|---|---|---|"]
    for style, r in result["models"].items():
        for kind in ("trained", "untrained"):
            m = r[kind]
            lines.append(f"| {style} ({kind}) | {' '.join(f'{v:.2f}' for v in _mean_curve(m['l2']))} | "
                         f"{' '.join(f'{v:.1f}' for v in _mean_curve(m['cosine_degrees']))} | "
                         f"{' '.join(f'{v:.2f}' for v in _mean_curve(m['norms']))} |")
    return "\n".join(lines)


def roughness(curve):
    """How much a per-layer curve changes from layer to layer, the first layer left out (its point
    is the LayerNorm artifact, see observations): the mean |value_(l+1) − value_l| over l >= 2."""
    rest = curve[1:]
    return sum(abs(b - a) for a, b in zip(rest, rest[1:])) / max(1, len(rest) - 1)


def observations(result):
    H, notes = result["H"], []
    for style, r in result["models"].items():
        norms = {kind: [stats.spread([seed[l] for seed in r[kind]["norms"]]) for l in range(result["N"] + 1)]
                 for kind in ("trained", "untrained")}
        later = [n["mean"] for n in norms["untrained"][1:]]
        first_l2 = {kind: stats.spread([seed[0] for seed in r[kind]["l2"]]) for kind in ("trained", "untrained")}
        notes.append(
            f"{style} (E = {r['E']}): untrained, every layer output has norm {min(later):.3f}–{max(later):.3f} "
            f"(√H = {math.sqrt(H):.3f}: a Post-LN output leaves a LayerNorm with gain 1) and the embedding output "
            f"{stats.fmt(norms['untrained'][0], 2)}; trained, ‖h_0‖ = {stats.fmt(norms['trained'][0], 2)}, "
            f"‖h_1‖ = {stats.fmt(norms['trained'][1], 2)}. The first L2 distance is {stats.fmt(first_l2['trained'], 2)} "
            f"trained and {stats.fmt(first_l2['untrained'], 2)} untrained, at least |‖h_1‖ − ‖h_0‖| by the triangle "
            "inequality: "
            + ("the first point is mostly the jump in norm from the embedding to the first LayerNorm, not a learned effect."
               if first_l2["untrained"]["mean"] > 0.5 * first_l2["trained"]["mean"] else
               "training changes the first point beyond the norm difference.")
            + (" (The seed ranges of trained and untrained first points overlap.)"
               if not stats.separated(first_l2["trained"], first_l2["untrained"]) else ""))
    rough = {style: {key: stats.spread([roughness(seed) for seed in r["trained"][key]])
                     for key in ("l2", "cosine_degrees")} for style, r in result["models"].items()}
    for key, what in (("cosine_degrees", "angle (degrees)"), ("l2", "L2 distance")):
        a, b = rough["ALBERT-style"][key], rough["BERT-style"][key]
        verdict = ("the run cannot tell which is smoother (seed ranges overlap)." if not stats.separated(a, b) else
                   ("the ALBERT-style (all-shared) transitions change less from layer to layer in every seed, "
                    "the paper's 'smoother'." if a["mean"] < b["mean"] else
                    "the BERT-style (not-shared) transitions change less from layer to layer in every seed, "
                    "against the paper's 'smoother with sharing'."))
        notes.append(f"Layer-to-layer change of the {what}, mean |Δ| over layers 2..N (trained): ALBERT-style "
                     f"{stats.fmt(a, 2)}, BERT-style {stats.fmt(b, 2)}: {verdict}")
    return notes
