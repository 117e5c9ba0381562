"""Experiment "layerwise": ALBERT's Figure 1, the comparison the paper makes. A BERT-style model
(E = H, nothing shared) and an ALBERT-style model (E < H, all-shared), both Post-LN with N >= 12
layers, trained on the pre-training corpus over several seeds: the L2 distance and the angle between
the input and the output of every layer, with the same models untrained (seed for seed) as the
control, and the norm of every hidden state, which tells what the first point measures."""
import math

from minishare import random as ms_random
from minishare.analysis import layerwise, layerwise_figure
from minishare.analysis.figure_style import save_figure
from minishare.experiments import albert_arms, claims as ledger, stats
from minishare.run.build import build_model, make_config, make_task

NAME = "layerwise"
TITLE = "Layer-to-layer transitions (ALBERT Figure 1)"
ORDER = 40
READS = ("albert", "batch_size", "eval_every", "layerwise", "layerwise_recipe", "layerwise_steps",
         "pretrain_corpus", "pretrain_lr", "pretrain_steps", "seq_len", "vocab_size")


# The paper's two models, and an all-shared one at the BERT-style E: set against BERT-style, it
# shows what sharing alone does, apart from the smaller E that ALBERT-style also has.
STYLES = ("BERT-style", "ALBERT-style", "all-shared, E = H")


def configs(settings):
    """style -> (sharing, AlbertConfig fields that differ from settings.albert)."""
    N, H = settings.layerwise["num_hidden_layers"], settings.albert["hidden_size"]
    return {"BERT-style": ("not-shared", dict(num_hidden_layers=N, embedding_size=H)),
            "ALBERT-style": ("all-shared", dict(num_hidden_layers=N,
                                                embedding_size=settings.layerwise["embedding_size"])),
            "all-shared, E = H": ("all-shared", dict(num_hidden_layers=N, embedding_size=H))}


def requests(settings, out=None):
    return {name: request for sharing, config in configs(settings).values()
            for name, request in albert_arms.seed_requests(settings, sharing, steps=settings.layerwise_steps,
                                                          recipe=settings.layerwise_recipe, **config).items()}


def _measure(model, batches):
    return {**layerwise.layer_transitions(model, batches), "norms": layerwise.state_norms(model, batches)}


def run(out, settings, progress=True):
    result = {"H": settings.albert["hidden_size"], "N": settings.layerwise["num_hidden_layers"],
              "steps": settings.layerwise_steps, "models": {}}
    for style, (sharing, config) in configs(settings).items():
        runs = albert_arms.seed_runs(out, settings, sharing, progress=progress, steps=settings.layerwise_steps,
                                    recipe=settings.layerwise_recipe, **config)
        kinds = {"trained": [], "untrained": []}
        for seed, trained in zip(settings.seeds, runs):
            request = albert_arms.albert_request(settings, sharing, seed=seed, steps=settings.layerwise_steps,
                                                recipe=settings.layerwise_recipe, **config)
            task, V = make_task("pretrain", seed, settings.batch_size, settings.seq_len,
                                corpus=settings.pretrain_corpus, vocab_size=settings.vocab_size)
            batches = task.eval_sets["sop"]
            ms_random.manual_seed(seed)             # the trained model's initialization, untrained
            untrained = build_model("pretrain", make_config("pretrain", V, overrides=request["overrides"],
                                                            seq_len=settings.seq_len))
            kinds["trained"].append(_measure(trained["model"], batches))
            kinds["untrained"].append(_measure(untrained, batches))
        result["models"][style] = {"E": config["embedding_size"], "sharing": sharing,
                                   "mlm_loss": [r["final"]["eval_mlm_loss"] for r in runs],
                                   "unigram": [r["final"]["eval_mlm_unigram_loss"] for r in runs],
                                   **{kind: {key: [m[key] for m in ms] for key in ("l2", "cosine_degrees", "norms")}
                                      for kind, ms in kinds.items()}}
    return result


def _title(result):
    m = result["models"]
    return (f"N = {result['N']}, H = {result['H']}, Post-LN; BERT-style E = {m['BERT-style']['E']} not-shared, "
            f"ALBERT-style E = {m['ALBERT-style']['E']} all-shared"
            + (f", and all-shared at E = {result['H']}" if "all-shared, E = H" in m else ""))


def figures(result, folder):
    series = {f"{style} ({kind})": r[kind] for style, r in result["models"].items() for kind in ("trained", "untrained")}
    return [(f"Input-to-output L2 distance and angle of each layer (ALBERT Figure 1, small scale): {_title(result)}",
             save_figure(layerwise_figure.plot_layer_transitions(series, title=_title(result)), f"{folder}/layerwise"))]


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
    is the LayerNorm artifact, see observations): the mean ``|value_(l+1) − value_l|`` over l >= 2."""
    rest = curve[1:]
    return sum(abs(b - a) for a, b in zip(rest, rest[1:])) / max(1, len(rest) - 1)


def relative_roughness(curve):
    """``roughness`` over the curve's own level (the mean of its values from layer 2 on): a curve
    that sits higher changes more in absolute terms for the same shape, so the two readings are
    given side by side."""
    rest = curve[1:]
    return roughness(curve) / (sum(abs(v) for v in rest) / len(rest))


def turns(curve):
    """The statistic behind "oscillate": the fraction of successive steps of the curve (layer 2 on)
    at which it changes direction. 0 for a curve that only falls (or only rises), 1 for a zigzag."""
    steps = [b - a for a, b in zip(curve[1:], curve[2:])]
    return sum(x * y < 0 for x, y in zip(steps, steps[1:])) / max(1, len(steps) - 1)


COLLAPSE = 0.01     # a layer "barely moves" its input when its L2 distance is under 1% of layer 1's


def collapse_depth(curve):
    """The first layer (1-based) whose L2 distance falls below ``COLLAPSE`` × layer 1's, or None.
    From there on a shared stack sits at a fixed point: it maps its input (almost) to itself,
    which is the opposite of the paper's "oscillate rather than converge to zero"."""
    return next((l + 1 for l, v in enumerate(curve) if v < COLLAPSE * curve[0]), None)


def first_point(r, H):
    """What the first point of Figure 1 is made of, for one model's results over seeds: the mean
    norms of h_0 (embedding output) and h_1 (first layer output), the first L2 distance, and the
    part of it that the difference of the two norms alone forces (``|‖h_1‖ − ‖h_0‖| <= ‖h_1 − h_0‖``,
    the triangle inequality), trained and untrained."""
    out = {}
    for kind in ("trained", "untrained"):
        norms, l2 = r[kind]["norms"], r[kind]["l2"]
        out[kind] = {"h0": stats.spread([n[0] for n in norms]), "h1": stats.spread([n[1] for n in norms]),
                     "l2": stats.spread([d[0] for d in l2]),
                     "forced": stats.spread([abs(n[1] - n[0]) / d[0] for n, d in zip(norms, l2)])}
    later = [v for seed in r["untrained"]["norms"] for v in seed[1:]]
    out["untrained_layer_norms"] = (min(later), max(later))
    return out


LEARNED = 0.05     # nats below the unigram loss that a trained model must reach to count as trained


def learned(r):
    """Whether a Figure 1 model left the unigram solution: its mean held-out MLM loss at least
    ``LEARNED`` below the unigram baseline's (None for a result that did not record them)."""
    if "mlm_loss" not in r:
        return None
    return sum(r["mlm_loss"]) / len(r["mlm_loss"]) < sum(r["unigram"]) / len(r["unigram"]) - LEARNED


def behind(r):
    """Per seed, whether it stayed within ``LEARNED`` of its own unigram loss (on the plateau), which
    the mean that ``learned`` reads can hide; empty for a result that did not record the losses."""
    return [m > u - LEARNED for m, u in zip(r.get("mlm_loss", []), r.get("unigram", []))]


def first_point_reading(forced):
    """What the first L2 point measures, read off the mean fraction ``forced`` of it that the norm
    difference ``|‖h_1‖ − ‖h_0‖|`` alone forces (the triangle inequality's lower bound)."""
    if forced >= 0.5:
        return (f"So this point is mostly a LayerNorm artifact (the norm difference alone forces {forced:.0%} of "
                "it: the E-wide embedding projected to H is far shorter than √H), not a learned effect.")
    if forced <= 0.1:
        return (f"Here the norms nearly match (their difference forces {forced:.0%} of the distance), so the first "
                "point measures what the layer changed, like the others.")
    return (f"The norm difference forces {forced:.0%} of this point: part of it is the LayerNorm's rescaling, "
            "part what the layer changed.")


def observations(result):
    H, notes = result["H"], []
    for style, r in result["models"].items():
        if learned(r) is None:
            continue
        loss, unigram = stats.spread(r["mlm_loss"]), stats.spread(r["unigram"])
        # the gate reads the mean over seeds; a seed left behind on the plateau is named all the same
        stuck = [f"{m:.3f} against its {u:.3f}" for m, u, b in zip(r["mlm_loss"], r["unigram"], behind(r)) if b]
        notes.append(f"{style} after {result['steps']} updates: held-out MLM loss {stats.fmt(loss)} against the "
                     f"unigram baseline's {stats.fmt(unigram)}; "
                     + ("it learned, so its curves describe a trained model" if learned(r) else
                        f"it did not get {LEARNED} nats below the unigram loss, so its 'trained' curves describe "
                        "a model that has not learned yet, and comparisons with it say little about Figure 1")
                     + (f"; but {len(stuck)} of {len(r['mlm_loss'])} seeds did not get {LEARNED} nats below their "
                        f"own unigram loss ({'; '.join(stuck)})." if stuck and learned(r) else "."))
    for style, r in result["models"].items():
        p = first_point(r, H)
        t, u = p["trained"], p["untrained"]
        lo, hi = p["untrained_layer_norms"]
        forced = t["forced"]["mean"]
        notes.append(
            f"{style} (E = {r['E']}), first point: every layer output of the untrained model has norm "
            f"{lo:.3f}–{hi:.3f}, i.e. √H = {math.sqrt(H):.3f} (Post-LN: it leaves a LayerNorm with gain 1, whatever "
            f"the layer computed); the embedding output h_0 has norm {stats.fmt(u['h0'], 2)} untrained, "
            f"{stats.fmt(t['h0'], 2)} trained (h_1: {stats.fmt(t['h1'], 2)}). The first L2 distance is "
            f"{stats.fmt(t['l2'], 2)} trained and {stats.fmt(u['l2'], 2)} untrained; the norm difference "
            f"|‖h_1‖ − ‖h_0‖| alone forces a fraction {stats.fmt(t['forced'], 3)} of it (trained). "
            + first_point_reading(forced))
    for style, r in result["models"].items():
        depths = [collapse_depth(curve) for curve in r["trained"]["l2"]]
        said = ", ".join("none" if d is None else f"layer {d}" for d in depths)
        on_plateau = behind(r)
        plateau = len(on_plateau) == len(depths) and all(b for d, b in zip(depths, on_plateau) if d is not None)
        notes.append(f"{style} (trained): the first layer whose L2 distance is below {COLLAPSE:.0%} of layer 1's, "
                     f"per seed: {said} (of {len(r['trained']['l2'][0])}); "
                     + ("no seed reaches a fixed point." if all(d is None for d in depths) else
                        "where one is named, the layers after it barely change their input."
                        + (" Every seed that reaches one did not learn (its held-out loss is at the unigram's): "
                           "that collapse is the plateau's, not a trained shared stack's." if plateau else "")))
    for style, r in result["models"].items():
        per_seed = [turns(curve) for curve in r["trained"]["l2"]]
        notes.append(f"{style} (trained): the L2 curve changes direction at {stats.fmt(stats.spread(per_seed), 2)} of "
                     "its layer-to-layer steps (0: it only falls or only rises; 1: a zigzag), the statistic this "
                     "book reads the paper's \"oscillate rather than converge\" with.")
    return notes


def baselines(result, settings):
    """The unigram MLM loss of the held-out set (one set per seed, the same for every model), less
    the ``LEARNED`` margin: a model whose curves are compared must have learned, i.e. beaten it by
    that much."""
    unigram = result["models"]["BERT-style"].get("unigram")
    if not unigram:
        return []
    return [ledger.baseline("layerwise", "eval_mlm_loss", f"unigram less {LEARNED} nats",
                            sum(unigram) / len(unigram) - LEARNED)]


def _learned_gate(models, style, index):
    """Roughness has no baseline of its own: a pair of curves is compared only where both models
    beat the unigram MLM loss on average over the kept seeds (``claims.compare``'s gate)."""
    if "mlm_loss" not in models[style]:
        return None
    return {"metric": "eval_mlm_loss", "what": "held-out MLM loss", "better": "lower",
            "a": [models[style]["mlm_loss"][i] for i in index], "b": [models["BERT-style"]["mlm_loss"][i] for i in index]}


def kept_seeds(models, style, seeds):
    """The per-seed gate of Figure 1's comparisons: the seeds at which both ``style`` and
    BERT-style left their own unigram plateau (``behind``); a seed that did not learn has no
    Figure 1 to compare. Returns (kept seeds, [(seed, who stayed behind)])."""
    a, b = behind(models[style]), behind(models["BERT-style"])
    if not a or not b:
        return list(seeds), []
    dropped = [(s, " and ".join(n for n, stuck in ((style, x), ("BERT-style", y)) if stuck))
               for s, x, y in zip(seeds, a, b) if x or y]
    return [s for s, x, y in zip(seeds, a, b) if not (x or y)], dropped


def claims(result, seeds):
    """Figure 1's "smoother": the mean layer-to-layer change of each trained curve, ALBERT-style
    (all-shared) against BERT-style (not-shared), paired by seed (primary); the same over the
    curve's own level, and for the all-shared model at E = H, sharing apart from E (secondary).
    Only seeds at which both models learned are paired (``kept_seeds``); the others are named in
    the comparison's words. Where fewer than two seeds learned, every seed is paired and the
    baseline gate decides (it leaves models that did not learn uncompared)."""
    models = result["models"]
    against = [("ALBERT-style", "", True)] + \
        ([("all-shared, E = H", ".same_E", False)] if "all-shared, E = H" in models else [])
    out = []
    for style, suffix, primary in against:
        kept, dropped = kept_seeds(models, style, seeds)
        if len(kept) < 2:
            kept, note = list(seeds), f" (fewer than two seeds learned: all {len(seeds)} paired)" if dropped else ""
        else:
            note = "" if not dropped else " (" + "; ".join(f"seed {s} left out: {who} stayed on the unigram plateau"
                                                          for s, who in dropped) + ")"
        index = [list(seeds).index(s) for s in kept]
        for key, what in (("l2", "L2 distance"), ("cosine_degrees", "angle (degrees)")):
            for measure, label, tag, main in ((roughness, "change", "", primary),
                                              (relative_roughness, "change over its level", ".relative", False)):
                a = [measure(models[style]["trained"][key][i]) for i in index]
                b = [measure(models["BERT-style"]["trained"][key][i]) for i in index]
                out.append(ledger.compare(
                    f"layerwise.{key}{suffix}{tag}", "layerwise",
                    f"Layer-to-layer {label} of the {what} (trained), {style} against BERT-style{note}",
                    f"{'relative_' if tag else ''}roughness_{key}", "lower", style, "BERT-style", kept, a, b,
                    f"ALBERT-large's {what} is smoother than BERT-large's (Lan et al., 2019, Figure 1)",
                    main, digits=2, gate=_learned_gate(models, style, index)))
    return out


# --- the book's table ---------------------------------------------------------------------------------
def book_rows(settings, said):
    """The chapter's table, row by row: (claim, what the paper reports, what this run measured)."""
    def rough(key):
        return lambda r: said(f"layerwise.{key}")
    return [
        ("ALBERT's L2 distances are smoother from layer to layer",
         "smoother for ALBERT-large than for BERT-large (Lan et al., 2019, Figure 1)", rough("l2")),
        ("ALBERT's angles are smoother from layer to layer (whether they oscillate rather than converge to "
         "zero, the paper's other words, is not measured here)",
         "smoother, and oscillating rather than converging to zero (Figure 1)", rough("cosine_degrees")),
    ]
