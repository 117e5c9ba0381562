"""Experiment "act": a Universal Transformer with Adaptive Computation Time (Dehghani et al., 2018,
Sec. 2.2) on a toy sequence-to-sequence task: one shared layer, the timestep signal, and each
token halting on its own after at most N steps. What it measures is the ponder time ρ = N + R of
every held-out token (``minishare.analysis.act``), in the encoder (source tokens) and in the
decoder (target positions, teacher-forced), over seeds.
"""
import numpy   # host-side summaries of the measured ponder times

from minishare.analysis import act as act_analysis, act_figure
from minishare.analysis.figure_style import save_figure
from minishare.data import seq2seq
from minishare.experiments import book_cells as cells, claims as ledger, stats
from minishare.experiments.runs import cached_run

NAME = "act"
TITLE = "The Universal Transformer with Adaptive Computation Time: ponder time per token"
ORDER = 150
READS = ("act", "act_steps", "act_task")

N_HELD_OUT = 256          # held-out examples whose tokens are measured
HELD_OUT_SEED = 20_000    # disjoint from the training batches (seeds 1..) and Seq2SeqTask's eval set
N_STRIPS = 3              # example sequences drawn token by token


def _request(settings, seed):
    steps = settings.act_steps
    return dict(task=settings.act_task, overrides=dict(settings.act), steps=steps, batch_size=64,
                lr=3e-3, eval_every=steps, seed=seed)


def _name(settings, seed):
    return f"act-universal-{settings.act_task}-s{seed}"


def requests(settings, out=None):
    return {_name(settings, seed): _request(settings, seed) for seed in settings.seeds}


def _measure(model, task):
    """Ponder times of the held-out examples: per stack, the mean over real tokens, the mean at
    each position, the mean per token identity, and the first few sequences token by token."""
    batch = seq2seq.collate(seq2seq.examples(task, N_HELD_OUT, seed=HELD_OUT_SEED, held_out=True))
    times = act_analysis.ponder_times(model, batch["src"], batch["tgt_in"],
                                      attention_mask=batch["src"] != seq2seq.PAD_ID)
    # the decoder position t reads tgt_in[t] and predicts tgt_out[t]: label it by what it predicts
    ids = {"encoder": batch["src"], "decoder": batch["tgt_out"]}
    result = {}
    for stack, t in times.items():
        result[stack] = {
            "mean": float(numpy.nanmean(t)),
            "by_position": [float(v) for v in act_analysis.mean_by_position(t)],
            "by_token": {s: m for s, (m, _) in act_analysis.mean_by_token(t, ids[stack], task.vocab).items()},
            "examples": [{"tokens": [task.vocab[int(i)] for i in row[~numpy.isnan(tr)]],
                          "times": [float(v) for v in tr[~numpy.isnan(tr)]]}
                         for row, tr in zip(ids[stack][:N_STRIPS], t[:N_STRIPS])],
        }
    # where the decoder predicts the end of the sequence, against every other target position
    ends = batch["tgt_out"] == seq2seq.EOS_ID
    for key, where in (("at_eos", ends), ("before_eos", ~ends)):
        result["decoder"][f"mean_{key}"] = float(numpy.nanmean(numpy.where(where, times["decoder"], numpy.nan)))
    return result


def run(out, settings, progress=True):
    task = seq2seq.get_task(settings.act_task)
    seeds = {}
    for seed in settings.seeds:
        r = cached_run(out, _name(settings, seed), progress, **_request(settings, seed))
        seeds[seed] = {"ponder": _measure(r["model"], task), "final": r["final"]}
    return {"task": settings.act_task, "config": dict(settings.act), "steps": settings.act_steps,
            "max_steps": settings.act["num_hidden_layers"], "seeds": seeds}


def _spread(result, key):
    """stats.spread over seeds of seeds[s][...][...] along the path ``key``."""
    values = []
    for r in result["seeds"].values():
        for k in key:
            r = r[k]
        values.append(r)
    return stats.spread(values)


def _label(result):
    c = result["config"]
    return (f"Universal Transformer with ACT on '{result['task']}':\none shared layer, at most "
            f"N = {result['max_steps']} steps, H = {c['hidden_size']}, {c.get('norm_position', 'pre')}-LN, "
            f"τ = {c['act_loss_weight']}")


def figures(result, folder):
    first = next(iter(result["seeds"].values()))["ponder"]
    strips = []
    for k in range(N_STRIPS):
        for stack, role in (("encoder", "source"), ("decoder", "target")):
            example = first[stack]["examples"][k]
            strips.append((f"example {k + 1}, {role}", example["tokens"], example["times"]))
    curves = {f"{stack} ({role} tokens)": [r["ponder"][stack]["by_position"] for r in result["seeds"].values()]
              for stack, role in (("encoder", "source"), ("decoder", "target"))}
    fig = act_figure.plot_ponder_time(strips, curves, result["max_steps"],
                                      f"Ponder time per token\n{_label(result)}\n"
                                      f"(examples from seed {next(iter(result['seeds']))}; curves over "
                                      f"{len(result['seeds'])} seeds)")
    return [(f"Ponder time N + R per token (steps): held-out examples of '{result['task']}' and the mean "
             "at each token position, mean and min–max over seeds",
             save_figure(fig, f"{folder}/act_ponder_time"))]


def report(result, figs):
    n = len(result["seeds"])
    lines = [f"{_label(result).replace(chr(10), ' ')}, timestep signal on, {result['steps']} training steps; "
             f"mean ± standard deviation (min–max) over {n} seeds, on {N_HELD_OUT} held-out examples. "
             "Ponder time ρ = N + R lies in [2, N + 1]: 2 is halting after one step.", "",
             "| measurement | over seeds |", "|---|---|"]
    rows = [("mean ponder time, encoder (source tokens)", ("ponder", "encoder", "mean")),
            ("mean ponder time, decoder (target positions)", ("ponder", "decoder", "mean")),
            ("decoder, positions that predict `<eos>`", ("ponder", "decoder", "mean_at_eos")),
            ("decoder, positions that predict a symbol", ("ponder", "decoder", "mean_before_eos")),
            ("held-out exact match", ("final", "eval_exact_match")),
            ("held-out token accuracy", ("final", "eval_token_accuracy")),
            ("held-out loss (cross-entropy + τ · ponder cost)", ("final", "eval_loss"))]
    lines += [f"| {label} | {stats.fmt(_spread(result, key))} |" for label, key in rows]
    symbols = sorted({s for r in result["seeds"].values() for s in r["ponder"]["encoder"]["by_token"]})
    lines += ["", "Mean ponder time of each source token (encoder), over seeds:", "",
              "| token | " + " | ".join(symbols) + " |", "|---" * (len(symbols) + 1) + "|",
              "| ponder time | " + " | ".join(f"{_token_spread(result, s)['mean']:.3f}" for s in symbols) + " |"]
    return "\n".join(lines)


def _token_spread(result, symbol, stack="encoder"):
    return stats.spread([r["ponder"][stack]["by_token"][symbol] for r in result["seeds"].values()
                         if symbol in r["ponder"][stack]["by_token"]])


def observations(result):
    enc, dec = _spread(result, ("ponder", "encoder", "mean")), _spread(result, ("ponder", "decoder", "mean"))
    exact = _spread(result, ("final", "eval_exact_match"))
    return [f"Mean ponder time: encoder {stats.fmt(enc)} steps, decoder {stats.fmt(dec)} steps "
            f"(2 = halting after the first of at most {result['max_steps']} steps); held-out exact "
            f"match {stats.fmt(exact)}."]


def claims(result, seeds):
    """Where ACT spends its steps, paired by seed: decoder against encoder, and the decoder's
    positions that predict `<eos>` against those that predict a symbol."""
    def values(path):
        out = []
        for seed in seeds:
            value = result["seeds"][str(seed)]          # result.json keys are strings
            for k in path:
                value = value[k]
            out.append(value)
        return out
    paper = "ponder time varies by position and token (Dehghani et al., 2018)"
    return [
        ledger.compare("act.decoder_vs_encoder", "act", "Mean ponder time, decoder against encoder",
                       "ponder_time", "higher", "decoder", "encoder", seeds, values(("ponder", "decoder", "mean")),
                       values(("ponder", "encoder", "mean")), paper, True, says="ponders longer"),
        ledger.compare("act.eos_vs_symbol", "act", "Decoder ponder time, positions that predict `<eos>` "
                       "against positions that predict a symbol", "ponder_time", "higher", "`<eos>` positions",
                       "symbol positions", seeds, values(("ponder", "decoder", "mean_at_eos")),
                       values(("ponder", "decoder", "mean_before_eos")), paper, True, says="ponders longer"),
    ]


# --- the book's table ---------------------------------------------------------------------------------
def book_rows(settings, said):
    """The chapter's table, row by row: (claim, what the paper reports, what this run measured)."""
    def mean(stack):
        return lambda r: cells.num(stats.spread([cells.get(s, "ponder", stack, "mean") for s in cells.get(r, "seeds").values()]), 2)
    return [
        ("ACT spends more steps on some positions than on others",
         "ponder time varies by position and token (Dehghani et al., 2018)",
         lambda r: "encoder " + mean("encoder")(r) + " steps per token, decoder " + mean("decoder")(r)
                   + f", of at most {cells.get(r, 'max_steps')}"),
    ]
