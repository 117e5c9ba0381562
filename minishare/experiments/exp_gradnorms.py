"""Experiment "gradnorms": Post-LN against Pre-LN in deep shared stacks, by layer position.

For an ALBERT with N positions, not shared, all-shared and Cycle (rev) with M sets, each in Post-LN
and Pre-LN, and each over the settings' seeds: the norm of the gradient of the loss with respect to
each position's use of its parameters (``minishare.analysis.gradnorms``), on one fixed held-out
batch, at initialization and after some training steps (MLM + SOP, AdamW, linear warm-up over the
first 10% of the steps). Xiong et al. (2020) explain Pre-LN's stability by the gradients of
Post-LN's layers at initialization; Takase & Kiyono (2021) argue that Cycle (rev) helps the lowest
and highest layers. The runs are small and are trained inside ``run`` (no cached checkpoints)."""
import math

from minishare import random as ms_random
from minishare.analysis import gradnorms, gradnorms_figure
from minishare.analysis.figure_style import save_figure
from minishare.experiments import claims as ledger, stats
from minishare.models import AlbertConfig, AlbertForPreTraining
from minishare.run.build import make_task
from minishare.train import TrainConfig, Trainer

NAME = "gradnorms"
TITLE = "Gradient norms by layer position: Post-LN against Pre-LN, shared stacks"
ORDER = 140
READS = ("gradnorm_batch", "gradnorm_model", "gradnorm_steps", "gradnorm_unique", "pretrain_corpus",
         "vocab_size")

# A secondary experiment: it trains inside ``run``, one model after another, so it runs over ``few_seeds``
SEEDS = "few_seeds"

NORMS = ("post", "pre")
LN_NAMES = {"post": "Post-LN", "pre": "Pre-LN"}


def plans(settings):
    """label -> (sharing, M) of the compared plans."""
    N, M = settings.gradnorm_model["num_hidden_layers"], settings.gradnorm_unique
    return {f"not shared (M = {N})": ("not-shared", None), "all-shared (M = 1)": ("all-shared", None),
            f"Cycle (rev) (M = {M})": ("cycle-rev", M)}


def _one_run(task, batch, V, settings, sharing, M, norm, seed):
    """Gradient norms by position at each of ``settings.gradnorm_steps``, and the training loss."""
    ms_random.manual_seed(seed)
    config = AlbertConfig.from_preset("albert-tiny", vocab_size=V, sharing=sharing, num_unique_layers=M,
                                      norm_position=norm, max_position_embeddings=128,
                                      **settings.gradnorm_model)
    model = AlbertForPreTraining(config)
    steps = max(settings.gradnorm_steps)
    trainer = Trainer(model, task, TrainConfig(steps=max(1, steps), lr=1e-3, eval_every=max(1, steps),
                                               warmup_steps=max(1, steps // 10), progress=False))
    norms = {}
    for step in sorted(settings.gradnorm_steps):
        if step:
            trainer.train(until=step)
        model.eval()              # dropout is 0 in these models; eval keeps the measurement clean
        norms[str(step)] = gradnorms.position_gradient_norms(model, lambda m: task.loss(m, batch)[0])
    return {"norms": norms, "final_loss": trainer.history[-1]["loss"] if trainer.history else None}


def run(out, settings, progress=True):
    B, T = settings.gradnorm_batch
    runs = {}
    for seed in settings.seeds:
        task, V = make_task("pretrain", seed, B, T, corpus=settings.pretrain_corpus, vocab_size=settings.vocab_size)
        batch = task.eval_sets["sop"][0]       # held out, the same for every model of this seed
        for norm in NORMS:
            for label, (sharing, M) in plans(settings).items():
                if progress:
                    print(f"[gradnorms] seed {seed}, {LN_NAMES[norm]}, {label}", flush=True)
                runs.setdefault(norm, {}).setdefault(label, []).append(
                    _one_run(task, batch, V, settings, sharing, M, norm, seed))
    return {"N": settings.gradnorm_model["num_hidden_layers"], "M": settings.gradnorm_unique,
            "H": settings.gradnorm_model["hidden_size"], "steps": list(settings.gradnorm_steps),
            "seeds": list(settings.seeds), "batch": [B, T], "runs": runs}


def curves(result, norm, label, step, part="layer"):
    """[per seed: [norm at each position]] for one LayerNorm position, plan and step."""
    return [r["norms"][str(step)][part] for r in result["runs"][norm][label]]


def top_bottom(values):
    """Mean norm over the top third of positions 2..N divided by that over the bottom third:
    above 1 when the gradients grow toward the output. Position 1 is left out: its input is the
    embedding output, not a layer's (with Post-LN every layer output has norm about √H, the
    embedding output does not), and its gradient stands apart from the rest."""
    rest = values[1:]
    k = max(1, len(rest) // 3)
    return (sum(rest[-k:]) / k) / (sum(rest[:k]) / k)


def _direction(values, band=0.05):
    """How top/bottom ratios over seeds read: a direction only where every seed lies beyond 1 ±
    ``band`` on the same side (a 1% tilt is not a profile)."""
    if min(values) > 1 + band:
        return "larger near the output"
    if max(values) < 1 - band:
        return "smaller near the output"
    if 1 - band <= min(values) and max(values) <= 1 + band:
        return f"level (every seed within {band:.0%} of 1)"
    return "of no clear direction (the seeds disagree)"


def figures(result, folder):
    N, M = result["N"], result["M"]
    panels = {(norm, step): {label: curves(result, norm, label, step) for label in result["runs"][norm]}
              for norm in NORMS for step in result["steps"]}
    fig = gradnorms_figure.plot_gradient_norms(panels, {norm: LN_NAMES[norm] for norm in NORMS}, result["steps"],
                                               f"Gradient norm of each position's use of its parameters, N = {N}, "
                                               f"H = {result['H']}; Cycle (rev) M = {M};\n"
                                               f"mean over {len(result['seeds'])} seeds, band min–max")
    return [(f"Per-position gradient norms, Post-LN (top) and Pre-LN (bottom), N = {N}, at "
             f"initialization and after training; not shared, all-shared and Cycle (rev) with M = {M}",
             save_figure(fig, f"{folder}/gradnorms"))]


def _ratio_spread(result, norm, label, step):
    return stats.spread([top_bottom(c) for c in curves(result, norm, label, step)])


def report(result, figs):
    N, M = result["N"], result["M"]
    B, T = result["batch"]
    lines = [f"Definition: the gradient norm of position i is the L2 norm of the gradient of the loss "
             f"with respect to position i's use of its parameters (its attention and FFN sets with "
             f"their LayerNorms): the term that position contributes to the gradient of a shared set, "
             f"computed on a not-shared copy of the model holding the same values. One fixed held-out "
             f"batch ({B} × {T} tokens, MLM + SOP loss) per seed; N = {N}, H = {result['H']}, "
             f"Cycle (rev) with M = {M}; seeds {result['seeds']}.", "",
             "Top/bottom: mean norm over the top third of positions 2..N divided by that over the "
             "bottom third (above 1: larger near the output; mean ± std (min–max) over seeds). "
             "Position 1 is left out of it: its input is the embedding output, not a layer's output "
             "(under Post-LN every layer output has norm about √H, the embedding output does not), "
             "and its gradient stands apart in the figure.", "",
             "| LN | plan | " + " | ".join(f"top/bottom at step {s}" for s in result["steps"]) +
             " | training loss at the end |", "|---" * (3 + len(result["steps"])) + "|"]
    for norm in NORMS:
        for label, runs in result["runs"][norm].items():
            losses = [r["final_loss"] for r in runs if r["final_loss"] is not None]
            lines.append(f"| {LN_NAMES[norm]} | {label} | " +
                         " | ".join(stats.fmt(_ratio_spread(result, norm, label, s), 2) for s in result["steps"]) +
                         f" | {stats.fmt(stats.spread(losses), 3) if losses else '-'} |")
    return "\n".join(lines)


def observations(result):
    """Facts of each run alone: the top/bottom ratio of every plan and LN position with the shape
    it reads as, and position 1 against position 2. Post-LN against Pre-LN and Cycle (rev) against
    not shared are claims (``claims``)."""
    notes = []
    labels = list(result["runs"]["post"])
    for step in result["steps"]:
        when = "at initialization" if step == 0 else f"after {step} steps"
        for label in labels:
            post = [top_bottom(c) for c in curves(result, "post", label, step)]
            pre = [top_bottom(c) for c in curves(result, "pre", label, step)]
            notes.append(f"{label}, {when}: top/bottom {stats.fmt(stats.spread(post), 2)} under Post-LN, "
                         f"{stats.fmt(stats.spread(pre), 2)} under Pre-LN; Post-LN's gradients are "
                         f"{_direction(post)}, Pre-LN's {_direction(pre)}.")
    # the first position against the second, at initialization (why it is left out of top/bottom)
    first = labels[0]
    for norm in NORMS:
        ratio = [c[0] / c[1] for c in curves(result, norm, first, 0)]
        notes.append(f"{LN_NAMES[norm]}, {first}, at initialization: position 1's gradient is "
                     f"{stats.fmt(stats.spread(ratio), 2)}× position 2's.")
    return notes


def claims(result, seeds):
    """Paired by seed (a seed fixes the batch and the initialization of every model):

    * per plan and step, Post-LN against Pre-LN on how far the profile is from level,
      ``|ln(top / bottom)|`` (0: level; lower is better, Xiong et al.'s (2020) account of why Pre-LN
      trains without warm-up: its gradients do not grow toward the output);
    * after the last step, Cycle (rev) against not shared on the gradient norm of the lowest and of
      the highest position, per LN position (higher is better: more of the update reaches the
      position; Takase & Kiyono (2021) argue for Cycle (rev) by these positions).

    None is primary: the experiment describes gradients, it was not designed around one test."""
    out, N, last = [], result["N"], result["steps"][-1]
    labels = list(result["runs"]["post"])
    for step in result["steps"]:
        when = "at initialization" if step == 0 else f"after {step} steps"
        for label in labels:
            level = {norm: [abs(math.log(top_bottom(c))) for c in curves(result, norm, label, step)] for norm in NORMS}
            out.append(ledger.compare(
                f"gradnorms.{_slug(label)}.step{step}.post_vs_pre", "gradnorms",
                f"Distance of the gradient-norm profile from level, |ln(top / bottom)|, {label}, {when}",
                "abs_log_top_bottom", "lower", "Post-LN", "Pre-LN", seeds, level["post"], level["pre"], digits=2,
                says="has the more level profile"))
    cycle_rev, not_shared = labels[2], labels[0]
    for norm in NORMS:
        for position, name in ((0, "lowest"), (N - 1, "highest")):
            a = [c[position] for c in curves(result, norm, cycle_rev, last)]
            b = [c[position] for c in curves(result, norm, not_shared, last)]
            out.append(ledger.compare(
                f"gradnorms.{norm}ln.{name}_position.cycle_rev_vs_not_shared", "gradnorms",
                f"Gradient norm of the {name} position ({position + 1} of {N}), {LN_NAMES[norm]}, after {last} steps",
                f"gradient_norm_position_{position + 1}", "higher", f"{cycle_rev}, {LN_NAMES[norm]}",
                f"{not_shared}, {LN_NAMES[norm]}", seeds, a, b, digits=4, says="receives the larger gradient"))
    return out


def _slug(label):
    """An id-safe name of a plan's label: "Cycle (rev) (M = 4)" -> "cycle-rev-m4"."""
    return "-".join("".join(ch if ch.isalnum() else " " for ch in label.lower()).split())
