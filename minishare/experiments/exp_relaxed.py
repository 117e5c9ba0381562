"""Experiment "relaxed": convert, don't retrain (Bae et al., 2024, arXiv 2410.20672, Relaxed
Recursive Transformers; Wang et al., 2024, arXiv 2410.03765, Basis Sharing).

One decoder-only LM per seed is trained not-shared (N layers) on the LM's corpus (``lm_corpus``). From it,
without training again (``models.recursive``):

* the Recursive Transformer: its N layers tied by Cycle into M sets, each the average of the
  layers it serves (the paper's Average), held-out loss as converted and after a short
  uptraining;
* the relaxed ones, a LoRA correction of rank r per position initialized from the truncated SVD
  of each layer's difference to its set, as converted and after the same uptraining;
* Basis Sharing at several basis sizes k, training-free;

and beside them, trained from scratch for as many updates as the trained model and its uptraining
together: the same Cycle stack (the recursive model's parameters exactly) and a not-shared stack of
M layers (the same count too). Held-out loss is plotted against unique parameters.
"""
import math

from minishare import random as ms_random
from minishare.analysis import count_parameters
from minishare.analysis.figure_style import save_figure
from minishare.analysis.relaxed_figure import plot_relaxed
from minishare.analysis.count_lm import count_baselines
from minishare.experiments import book_cells as cells, claims as ledger, stats
from minishare.experiments.common import corpus_name, tokenizer_vocab_size
from minishare.run.build import make_task
from minishare.experiments.runs import cached_run
from minishare.models.recursive import to_basis_shared, to_recursive, to_relaxed
from minishare.sharing import Plan
from minishare.train import TrainConfig, Trainer

NAME = "relaxed"
TITLE = "Convert, don't retrain: a trained model made recursive, relaxed and basis-shared"
ORDER = 170
READS = ("lm_corpus", "relaxed", "vocab_size")

TRAINED = "not-shared, trained"
PAPER_SCRATCH = ("a recursive Gemma 1B made from Gemma 2B and uptrained gains up to 13.5 points over a Gemma 1B "
                 "pretrained from scratch (Bae et al., 2024)")
PAPER_RELAXED = ("the layer-wise LoRA recovers most of the gap between the recursive model and the full-size one "
                 "(Bae et al., 2024)")


def _plan(s):
    return Plan.build("cycle", s["layers"], s["unique"])


def _request(settings, seed, sharing, layers, steps):
    s = settings.relaxed
    overrides = {**s["model"], "num_hidden_layers": layers, "norm_position": s["norm"], "sharing": sharing,
                 **({"num_unique_layers": s["unique"]} if sharing == "cycle" else {})}
    return dict(task="lm", overrides=overrides, corpus=settings.lm_corpus, vocab_size=settings.vocab_size,
                seq_len=s["seq_len"], steps=steps,
                batch_size=s["batch_size"], lr=s["lr"], eval_every=steps, seed=seed)


def _runs(settings):
    """{arm: (name of its run for a seed, request for a seed)} of the trained runs."""
    s = settings.relaxed
    total = s["steps"] + s["uptrain_steps"]
    return {TRAINED: (lambda seed: f"relaxed-teacher-s{seed}",
                      lambda seed: _request(settings, seed, "not-shared", s["layers"], s["steps"])),
            f"Cycle M = {s['unique']}, N = {s['layers']}, from scratch": (
                lambda seed: f"relaxed-scratch-cycle-s{seed}",
                lambda seed: _request(settings, seed, "cycle", s["layers"], total)),
            f"not-shared N = {s['unique']}, from scratch": (
                lambda seed: f"relaxed-scratch-shallow-s{seed}",
                lambda seed: _request(settings, seed, "not-shared", s["unique"], total))}


def requests(settings, out=None):
    return {name(seed): request(seed) for name, request in _runs(settings).values() for seed in settings.seeds}


def trained_model(out, settings, seed, progress=True):
    """The trained not-shared LM of ``seed`` that every conversion starts from (trained into
    ``out`` when it is not cached there)."""
    name, request = _runs(settings)[TRAINED]
    return cached_run(out, name(seed), progress, **request(seed))["model"]


def _uptrain(model, task, s, seed):
    """A short uptraining of a converted model, its own schedule (warm-up and decay)."""
    ms_random.manual_seed(seed)
    Trainer(model, task, TrainConfig(steps=s["uptrain_steps"], lr=s["uptrain_lr"], eval_every=s["uptrain_steps"],
                                     progress=False)).train()
    return model


def _arms_of_seed(out, settings, seed, progress):
    """{arm: (unique parameters, held-out loss)} for one seed."""
    s, plan = settings.relaxed, _plan(settings.relaxed)
    task, _ = make_task("lm", seed, s["batch_size"], s["seq_len"], corpus=settings.lm_corpus,
                        vocab_size=settings.vocab_size)
    arms = {}

    def measure(name, model):
        model.eval()
        arms[name] = (count_parameters(model), task.evaluate(model)["loss"])

    runs = {arm: cached_run(out, name(seed), progress, **request(seed)) for arm, (name, request) in _runs(settings).items()}
    trained = runs[TRAINED]["model"]
    for arm, run in runs.items():
        measure(arm, run["model"])
    measure("recursive, converted", to_recursive(trained, plan, s["init"]))
    measure("recursive, uptrained", _uptrain(to_recursive(trained, plan, s["init"]), task, s, seed))
    for r in s["ranks"]:
        measure(f"relaxed r = {r}, converted", to_relaxed(trained, plan, r, s["init"]))
        measure(f"relaxed r = {r}, uptrained", _uptrain(to_relaxed(trained, plan, r, s["init"]), task, s, seed))
    for k in s["basis_ranks"]:
        measure(f"basis sharing k = {k}", to_basis_shared(trained, k))
    return arms


def run(out, settings, progress=True):
    s = settings.relaxed
    per_seed = [_arms_of_seed(out, settings, seed, progress) for seed in settings.seeds]
    arms = {name: {"params": per_seed[0][name][0], "loss": stats.spread([seed[name][1] for seed in per_seed])}
            for name in per_seed[0]}
    return {"N": s["layers"], "M": s["unique"], "H": s["model"]["hidden_size"], "init": s["init"],
            "steps": s["steps"], "uptrain_steps": s["uptrain_steps"], "ranks": list(s["ranks"]),
            "basis_ranks": list(s["basis_ranks"]), "seeds": list(settings.seeds), "corpus": settings.lm_corpus,
            "vocab_size": tokenizer_vocab_size(settings.lm_corpus, settings.vocab_size),
            "seq_len": s["seq_len"], "batch_size": s["batch_size"], "arms": arms}


# --- figure, table, claims ---------------------------------------------------------------------------
def _point(result, name):
    a = result["arms"][name]
    return a["params"], a["loss"]["values"]


def figures(result, folder):
    arms, N, M = result["arms"], result["N"], result["M"]
    curves = {f"relaxed, {when} (r = 0, {', '.join(map(str, result['ranks']))})":
              [_point(result, f"recursive, {when}")] + [_point(result, f"relaxed r = {r}, {when}") for r in result["ranks"]]
              for when in ("converted", "uptrained")}
    curves[f"basis sharing, training-free (k = {', '.join(map(str, result['basis_ranks']))})"] = [
        _point(result, f"basis sharing k = {k}") for k in result["basis_ranks"]]
    points = {name: _point(result, name) for name in arms if "scratch" in name or name == TRAINED}
    title = (f"Converting a trained decoder LM (N = {N}, H = {result['H']}): Cycle M = {M}, "
             f"{result['uptrain_steps']} uptraining steps")
    return [("Held-out loss against unique parameters: the trained not-shared model, its Cycle conversion relaxed "
             "by LoRA of rank r (r = 0 is the recursive model), as converted and uptrained, Basis Sharing, and models of "
             "the recursive model's parameters trained from scratch",
             save_figure(plot_relaxed(curves, points, title), f"{folder}/loss_vs_unique_parameters"))]


def report(result, figs):
    n = len(result["seeds"])
    lines = [f"Decoder-only LM on the {corpus_name(result['corpus'])}, N = {result['N']}, H = {result['H']}, "
             "trained not-shared for "
             f"{result['steps']} updates; converted to Cycle M = {result['M']} ({result['init']} of the layers each set "
             f"serves), relaxed by LoRA of rank r initialized from the truncated SVD, uptrained {result['uptrain_steps']} "
             f"updates; Basis Sharing training-free; from scratch: {result['steps'] + result['uptrain_steps']} updates. "
             f"Held-out loss in nats, mean ± std (min–max) over {n} seeds.", "",
             "| model | unique parameters | held-out loss |", "|---|---|---|"]
    for name, a in result["arms"].items():
        lines.append(f"| {name} | {a['params']:,} | {stats.fmt(a['loss'])} |")
    return "\n".join(lines)


def observations(result):
    arms, top = result["arms"], max(result["ranks"])
    full = arms[TRAINED]["params"]
    return [f"The recursive model stores {arms['recursive, converted']['params']:,} of the trained model's {full:,} "
            f"parameters; rank {top} adds {arms[f'relaxed r = {top}, converted']['params'] - arms['recursive, converted']['params']:,} "
            f"(r (in + out) per matrix and position, {result['N']} positions)."]


def claims(result, seeds):
    arms, M, N, top = result["arms"], result["M"], result["N"], max(result["ranks"])

    def loss(name):
        return arms[name]["loss"]["values"]

    def claim(id, a, b, what, paper=None, primary=False):
        return ledger.compare(f"relaxed.{id}", "relaxed", what, "loss", "lower", a, b, seeds, loss(a), loss(b),
                              paper, primary)
    scratch = f"Cycle M = {M}, N = {N}, from scratch"
    return [
        claim("relaxed_vs_recursive", f"relaxed r = {top}, uptrained", "recursive, uptrained",
              f"Held-out loss, relaxed (r = {top}) against recursive, both uptrained", PAPER_RELAXED, True),
        claim("uptrained_vs_scratch", "recursive, uptrained", scratch,
              "Held-out loss, the converted recursive model uptrained against the same stack trained from scratch",
              PAPER_SCRATCH, True),
        claim("uptraining", "recursive, uptrained", "recursive, converted",
              "Held-out loss, the recursive model after uptraining against as converted"),
        claim("relaxed_converted", f"relaxed r = {top}, converted", "recursive, converted",
              f"Held-out loss, relaxed (r = {top}) against recursive, both as converted (no training)"),
    ]


def baselines(result, settings):
    """The count models of the training tokens (``minishare.analysis.count_lm``), as held-out loss."""
    return [ledger.baseline("relaxed", "loss", name, math.log(ppl))
            for name, ppl in count_baselines(result["corpus"], settings.vocab_size, result["seq_len"],
                                                     result["batch_size"])]


# --- the book's table ---------------------------------------------------------------------------------
def book_rows(settings, said):
    """The chapter's table, row by row: (claim, what the paper reports, what this run measured)."""
    def loss(name):
        return lambda r: cells.num(cells.get(r, "arms", name, "loss"))
    return [
        ("tying the trained layers into M sets costs loss before any training",
         "the paper uptrains every converted model before it evaluates it (Bae et al., 2024)",
         lambda r: f"not-shared {loss('not-shared, trained')(r)}, recursive as converted "
                   f"{loss('recursive, converted')(r)}"),
        ("uptrained, the converted model beats the same stack trained from scratch",
         "a recursive Gemma 1B from Gemma 2B gains up to 13.5 points over a Gemma 1B from scratch (Bae et al., 2024)",
         lambda r: said("relaxed.uptrained_vs_scratch")),
        ("the layer-wise LoRA recovers more of the original as r grows",
         "relaxed models close most of the gap to the full-size model (Bae et al., 2024)",
         lambda r: said("relaxed.relaxed_vs_recursive")),
        ("Basis Sharing compresses without training",
         "outperforms SVD-based compression at 20–50% compression on LLaMA (Wang et al., 2024, Table 1)",
         lambda r: "; ".join(f"k = {k}: {cells.get(r, 'arms', f'basis sharing k = {k}', 'params'):,} parameters, "
                             f"{loss(f'basis sharing k = {k}')(r)}" for k in cells.get(r, "basis_ranks"))),
    ]
