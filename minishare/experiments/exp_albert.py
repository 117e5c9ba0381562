"""Experiment "albert_sharing": ALBERT's cross-layer sharing variants (Lan et al., 2019, Table 4),
trained with MLM + SOP on the embedded corpus: loss against step and against wall-clock time.
Also the requests the layer-wise and SOP/NSP experiments reuse."""
import statistics

from minishare.analysis import count_parameters, plots
from minishare.experiments.runs import cached_run

VARIANTS = ("not-shared", "all-shared", "shared-attention", "shared-ffn")


def albert_request(settings, sharing, objective="sop", seed=0):
    """The run_training arguments of one tiny ALBERT pre-training run."""
    return dict(task="pretrain", preset="albert-tiny", overrides={**settings.albert, "sharing": sharing},
                objective=objective, corpus="default", vocab_size=settings.vocab_size,
                seq_len=settings.seq_len, steps=settings.pretrain_steps, batch_size=settings.batch_size,
                lr=1e-3, eval_every=settings.eval_every, seed=seed)


def albert_run(out, settings, sharing, objective="sop", progress=True):
    return cached_run(out, f"albert-{sharing}-{objective}", progress, **albert_request(settings, sharing, objective))


def run(out, settings, progress=True):
    result = {}
    for sharing in VARIANTS:
        r = albert_run(out, settings, sharing, progress=progress)
        result[sharing] = {"params": count_parameters(r["model"]), "history": r["history"],
                           "final": r["final"],
                           "step_time": statistics.median(row["step_time"] for row in r["history"])}
    return result


def figures(result, folder):
    histories = {name: r["history"] for name, r in result.items()}
    return [
        ("MLM loss (training, smoothed; held-out as markers) against step, ALBERT's four sharing variants",
         plots.save_figure(plots.plot_convergence(histories, x="step", y="mlm_loss", eval_y="eval_mlm_loss"), f"{folder}/albert_loss_vs_step")),
        ("The same runs against wall-clock time: sharing saves parameters, not compute",
         plots.save_figure(plots.plot_convergence(histories, x="wall_clock", y="mlm_loss", eval_y="eval_mlm_loss"), f"{folder}/albert_loss_vs_time")),
    ]


def report(result, figs):
    rows = ["| variant | parameters | median step time (s) | held-out MLM loss | MLM accuracy | SOP accuracy |",
            "|---|---|---|---|---|---|"]
    for name, r in result.items():
        f = r["final"]
        rows.append(f"| {name} | {r['params']:,} | {r['step_time']:.3f} | {f.get('eval_mlm_loss', float('nan')):.3f} "
                    f"| {f.get('eval_mlm_accuracy', float('nan')):.3f} | {f.get('eval_sop_accuracy', float('nan')):.3f} |")
    return "\n".join(rows)


def _clearly_above(a, b, margin=0.01):
    """a exceeds b by more than ``margin`` (relative): smaller gaps are noise at this scale."""
    return a - b > margin * max(abs(a), abs(b))


def observations(result):
    """Plain statements, computed from this run, about the paper's claims."""
    loss = {name: r["final"].get("eval_mlm_loss", float("nan")) for name, r in result.items()}
    params = {name: r["params"] for name, r in result.items()}
    time = {name: r["step_time"] for name, r in result.items()}
    notes = [f"all-shared has {params['not-shared'] / params['all-shared']:.1f}× fewer parameters than "
             f"not-shared; its median step takes {time['all-shared'] / time['not-shared']:.2f}× as long "
             "(the same computation)."]
    unigram = next(iter(result.values()))["final"].get("eval_mlm_unigram_loss")
    if unigram is not None:
        notes.append(f"Unigram baseline for the held-out masked tokens: {unigram:.3f}; "
                     + ("every variant is below it, so the models use context."
                        if all(v < unigram for v in loss.values())
                        else "not every variant is below it yet (too little training)."))
    notes.append(f"Held-out MLM loss: not-shared {loss['not-shared']:.3f}, all-shared {loss['all-shared']:.3f}: "
                 + ("sharing costs some accuracy, as in the paper." if _clearly_above(loss["all-shared"], loss["not-shared"])
                    else "no clear cost of sharing at this size and training length (the paper's gap is small)."))
    notes.append(f"shared-FFN {loss['shared-ffn']:.3f} vs shared-attention {loss['shared-attention']:.3f}: "
                 + ("sharing the FFN hurts more than sharing attention, as in the paper's Table 4."
                    if _clearly_above(loss["shared-ffn"], loss["shared-attention"])
                    else "the paper's finding that sharing the FFN hurts more is not visible in this small run."))
    return notes
