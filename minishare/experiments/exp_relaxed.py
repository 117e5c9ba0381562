"""Experiment "relaxed": convert, don't retrain (Bae et al., 2024, arXiv 2410.20672, Relaxed
Recursive Transformers; Wang et al., 2024, arXiv 2410.03765, Basis Sharing).

One decoder-only LM per seed, the teacher, is trained not-shared (N layers) on the LM's corpus
(``lm_corpus``) until its held-out loss stops falling (the settings say where that was found). From
it, without training again (``models.recursive``):

* the Recursive Transformer: its N layers tied by Cycle into M sets, each the average of the
  layers it serves (the paper's Average), held-out loss as converted and after a short
  uptraining on batches the teacher never read;
* the relaxed ones, a LoRA correction of rank r per position initialized from the truncated SVD
  of each layer's difference to its set, as converted and after the same uptraining;
* Basis Sharing at several basis sizes k, training-free;

and beside them, models of the recursive model's parameters trained from scratch: the same Cycle
stack and a not-shared stack of M layers for as many updates as the uptraining (the paper's
comparison: a model of the recursive model's size pretrained on the uptraining tokens), and the
Cycle stack for as many as the teacher and the uptraining together (the equal-total-compute
question: is converting worth more than spending the teacher's updates on the small model
itself?). Held-out loss is plotted against unique parameters.
"""
import math

from minishare import random as ms_random
from minishare.analysis import count_parameters
from minishare.analysis.figure_style import save_figure
from minishare.analysis.relaxed_figure import plot_relaxed
from minishare.analysis.count_lm import count_baselines
from minishare.experiments import book_cells as cells, claims as ledger, stats
from minishare.experiments.common import corpus_name, tokenizer_vocab_size
from minishare.run.build import build_model, make_config, make_task
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


UPTRAIN, TOTAL = "uptraining", "teacher + uptraining"      # the from-scratch budgets, in updates


def scratch(M, N, budget):
    """The name of the from-scratch Cycle arm trained for the ``budget`` (UPTRAIN or TOTAL)
    updates: the same words whatever the step counts, so that a plan can name it before the run."""
    return f"Cycle M = {M}, N = {N}, from scratch ({budget} budget)"


def shallow(M):
    return f"not-shared N = {M}, from scratch ({UPTRAIN} budget)"


def _runs(settings):
    """{arm: (name of its run for a seed, request for a seed)} of the trained runs. No not-shared
    stack of M layers at the teacher's and the uptraining's updates: the equal-total-compute
    question is asked by the Cycle stack, and shared against not-shared at equal parameters is the
    "lm" experiment's."""
    s = settings.relaxed
    total = s["steps"] + s["uptrain_steps"]
    return {TRAINED: (lambda seed: f"relaxed-teacher-s{seed}",
                      lambda seed: _request(settings, seed, "not-shared", s["layers"], s["steps"])),
            scratch(s["unique"], s["layers"], UPTRAIN): (
                lambda seed: f"relaxed-scratch-cycle-uptrain-s{seed}",
                lambda seed: _request(settings, seed, "cycle", s["layers"], s["uptrain_steps"])),
            shallow(s["unique"]): (
                lambda seed: f"relaxed-scratch-shallow-uptrain-s{seed}",
                lambda seed: _request(settings, seed, "not-shared", s["unique"], s["uptrain_steps"])),
            scratch(s["unique"], s["layers"], TOTAL): (
                lambda seed: f"relaxed-scratch-cycle-total-s{seed}",
                lambda seed: _request(settings, seed, "cycle", s["layers"], total))}


def requests(settings, out=None):
    return {name(seed): request(seed) for name, request in _runs(settings).values() for seed in settings.seeds}


def trained_model(out, settings, seed, progress=True):
    """The trained not-shared LM of ``seed`` that every conversion starts from (trained into
    ``out`` when it is not cached there)."""
    name, request = _runs(settings)[TRAINED]
    return cached_run(out, name(seed), progress, **request(seed))["model"]


class BatchesAfter:
    """A task whose batch i is ``task``'s batch ``start + i``; its loss and evaluation are the task's.
    A task's batches are a pure function of (its seed, the index) and a Trainer starts at index
    0, so an uptraining on the task itself would replay the teacher's first batches: text the
    teacher has already learned from. Reading from ``start`` = the teacher's updates on gives it
    fresh text, as the paper's uptraining on further tokens does."""

    def __init__(self, task, start):
        self.task, self.start = task, start

    def batch(self, index):
        return self.task.batch(self.start + index)

    def loss(self, model, batch):
        return self.task.loss(model, batch)

    def evaluate(self, model):
        return self.task.evaluate(model)


def _uptrainer(model, task, s, seed, steps):
    ms_random.manual_seed(seed)
    return Trainer(model, BatchesAfter(task, s["steps"]),
                   TrainConfig(steps=steps, lr=s["uptrain_lr"], eval_every=steps, progress=False))


def _uptrain(model, task, s, seed):
    """A short uptraining of a converted model, its own schedule (warm-up and decay), on the
    batches after the teacher's."""
    _uptrainer(model, task, s, seed, s["uptrain_steps"]).train()
    return model


def trains_here(settings):
    """The uptrainings, once per seed: of the recursive model and of each relaxed one (timed on an
    untrained model of the same shape: a step costs what it costs whatever the weights)."""
    s, plan = settings.relaxed, _plan(settings.relaxed)

    def make(steps, rank=None):
        task, V = make_task("lm", 0, s["batch_size"], s["seq_len"], corpus=settings.lm_corpus,
                            vocab_size=settings.vocab_size)
        ms_random.manual_seed(0)
        model = build_model("lm", make_config("lm", V, overrides=_request(
            settings, 0, "not-shared", s["layers"], 1)["overrides"], seq_len=s["seq_len"]))
        converted = to_recursive(model, plan, s["init"]) if rank is None else to_relaxed(model, plan, rank, s["init"])
        return _uptrainer(converted, task, s, 0, steps)
    kinds = {"recursive, uptrained": (s["uptrain_steps"] * len(settings.seeds), make)}
    kinds.update({f"relaxed r = {r}, uptrained": (s["uptrain_steps"] * len(settings.seeds),
                                                  lambda steps, r=r: make(steps, r)) for r in s["ranks"]})
    return kinds


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
             "the recursive model's parameters trained from scratch for the uptraining's updates and for the teacher's "
             "and the uptraining's together",
             save_figure(plot_relaxed(curves, points, title), f"{folder}/loss_vs_unique_parameters"))]


def report(result, figs):
    n = len(result["seeds"])
    lines = [f"Decoder-only LM on the {corpus_name(result['corpus'])}, N = {result['N']}, H = {result['H']}, "
             "trained not-shared for "
             f"{result['steps']} updates; converted to Cycle M = {result['M']} ({result['init']} of the layers each set "
             f"serves), relaxed by LoRA of rank r initialized from the truncated SVD, uptrained {result['uptrain_steps']} "
             f"updates on batches the teacher never read; Basis Sharing training-free; from scratch: "
             f"{result['uptrain_steps']} updates ({UPTRAIN} budget) and {result['steps'] + result['uptrain_steps']} "
             f"({TOTAL} budget). "
             f"Held-out loss in nats, mean ± std (min–max) over {n} seeds.", "",
             "| model | unique parameters | held-out loss |", "|---|---|---|"]
    for name, a in result["arms"].items():
        lines.append(f"| {name} | {a['params']:,} | {stats.fmt(a['loss'])} |")
    return "\n".join(lines)


def _mean(result, name):
    return result["arms"][name]["loss"]["mean"]


def observations(result):
    arms, top, M, N = result["arms"], max(result["ranks"]), result["M"], result["N"]
    full = arms[TRAINED]["params"]
    size = [f"The recursive model stores {arms['recursive, converted']['params']:,} of the trained model's {full:,} "
            f"parameters; rank {top} adds {arms[f'relaxed r = {top}, converted']['params'] - arms['recursive, converted']['params']:,} "
            f"(r (in + out) per matrix and position, {result['N']} positions)."]
    if scratch(M, N, TOTAL) not in arms:      # a result of the earlier design: one from-scratch arm
        return size
    teacher, total = _mean(result, TRAINED), _mean(result, scratch(M, N, TOTAL))
    return [f"The teacher reached a held-out loss of {teacher:.3f} (mean over seeds) after {result['steps']} updates, "
            + ("below" if teacher < total else "not below") + f" the {total:.3f} of the Cycle stack trained from "
            f"scratch for {result['steps'] + result['uptrain_steps']} (the teacher's and the uptraining's updates); "
            f"the same stack reached {_mean(result, scratch(M, N, UPTRAIN)):.3f} after the uptraining's "
            f"{result['uptrain_steps']} alone, and the recursive model made from the teacher "
            f"{_mean(result, 'recursive, uptrained'):.3f} after its {result['uptrain_steps']} of uptraining."] + size


def claims(result, seeds):
    arms, M, N, top = result["arms"], result["M"], result["N"], max(result["ranks"])

    def loss(name):
        return arms[name]["loss"]["values"]

    def claim(id, a, b, what, paper=None, primary=False):
        return ledger.compare(f"relaxed.{id}", "relaxed", what, "loss", "lower", a, b, seeds, loss(a), loss(b),
                              paper, primary)
    return [
        claim("relaxed_vs_recursive", f"relaxed r = {top}, uptrained", "recursive, uptrained",
              f"Held-out loss, relaxed (r = {top}) against recursive, both uptrained", PAPER_RELAXED, True),
        claim("uptrained_vs_scratch", "recursive, uptrained", scratch(M, N, UPTRAIN),
              "Held-out loss, the converted recursive model uptrained against the same stack trained from scratch "
              "for as many updates as the uptraining", PAPER_SCRATCH, True),
        claim("uptrained_vs_scratch_total", "recursive, uptrained", scratch(M, N, TOTAL),
              "Held-out loss, the converted recursive model uptrained against the same stack trained from scratch "
              "for as many updates as the teacher and the uptraining together (equal total updates)"),
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
        ("uptrained, the converted model beats the same stack trained from scratch on the uptraining's updates",
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
