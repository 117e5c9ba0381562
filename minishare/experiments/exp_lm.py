"""Experiment "lm": Takase & Kiyono's strategies on language modelling (they report LM besides
translation), with the decoder-only model (``models.DecoderLM``) on the embedded corpus.

At equal parameters: Vanilla (M = N = n), Universal (M = 1 at n positions, hidden size and FFN
widened until its parameters are closest to Vanilla's, embedding included: E = H) and Sequence,
Cycle and Cycle (rev) with M = n layers at N = 2n positions. Held-out perplexity over seeds; speed
measured back to back after training, as in the "takase" experiment (whose pieces this reuses).
"""
from minishare.experiments import exp_takase, stats
from minishare.experiments.exp_takase import LN


def _plan(settings):
    """The methods at equal parameters (``exp_takase.variants``), with the LM's LN position."""
    return exp_takase.variants("lm", settings.vocab_size, settings.lm_model, settings.lm_layers, settings.lm_norm,
                               efficiency=False)


def _request(settings, variant, seed):
    steps = settings.lm_steps
    return dict(task="lm", overrides=variant["overrides"], vocab_size=settings.vocab_size,
                seq_len=settings.lm_seq_len, steps=steps, batch_size=settings.lm_batch_size,
                lr=settings.lm_lr, eval_every=max(steps // settings.lm_evals, 1), seed=seed)


def _name(settings, key, v, seed):
    return f"lm-{settings.lm_norm}ln-{exp_takase._slug(key, v['M'], v['N'])}-s{seed}"


def requests(settings):
    """One training run per (method, seed)."""
    return {_name(settings, key, v, seed): _request(settings, v, seed)
            for key, v in _plan(settings).items() for seed in settings.seeds}


def run(out, settings, progress=True):
    vs = _plan(settings)
    timing = exp_takase.step_times("lm", {k: v["overrides"] for k, v in vs.items()}, settings.lm_batch_size,
                                   settings.timing_repeats, seq_len=settings.lm_seq_len,
                                   vocab_size=settings.vocab_size)
    methods = exp_takase.summarize(out, lambda key, v, seed: _name(settings, key, v, seed), vs, settings.seeds,
                                   lambda v, seed: _request(settings, v, seed), timing, progress,
                                   metrics=("loss", "perplexity"))
    return {"corpus": "default", "vocab_size": settings.vocab_size, "seq_len": settings.lm_seq_len,
            "steps": settings.lm_steps, "seeds": list(settings.seeds), "n": settings.lm_layers,
            "settings": {settings.lm_norm: methods}}


def figures(result, folder):
    return exp_takase.convergence_figures(result, folder, "lm", {
        "equal_params": ("equal parameters", exp_takase._equal, "step"),
    }, f"Language modelling (decoder-only, V={result['vocab_size']:,})", perplexity=True)


def report(result, figs):
    n, S = result["n"], result["steps"]
    lines = [f"Decoder-only language model on the embedded corpus (V = {result['vocab_size']:,} BPE, "
             f"windows of {result['seq_len']} tokens), {S} updates, seeds {result['seeds']}. Vanilla "
             f"M = N = {n}; Universal M = 1 at N = {n}, widened (H, FFN 4 H, embedding E = H) to "
             f"Vanilla's parameters; the strategies M = {n} at N = {2 * n}. Held-out loss: the mean "
             f"cross-entropy per token on fixed held-out windows, in nats; held-out perplexity: e^loss "
             f"of each run, no unit (the figure's right-hand axis reads its curves so). Values: mean ± "
             f"std (min–max) over seeds.",
             ""]
    for norm, methods in result["settings"].items():
        lines += ["| method | M | N | H | LN | parameters | speed | held-out loss (nats) | "
                  "held-out perplexity (e^loss) |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in methods.values():
            lines.append(f"| {r['method']} | {r['M']} | {r['N']} | {r['H']} | {LN[norm]} | "
                         f"{r['params']:,} | {r['speed']:.2f} | {stats.fmt(r['loss'])} | "
                         f"{stats.fmt(r['perplexity'], 1)} |")
        lines.append("")
    return "\n".join(lines)


def observations(result):
    notes = []
    for norm, methods in result["settings"].items():
        n = methods["vanilla"]["N"]
        others = [k for k in methods if k != "vanilla"]
        notes.append(f"Language modelling, {LN[norm]}, equal parameters, held-out perplexity against "
                     f"Vanilla (M={n}, N={n}) {stats.fmt(methods['vanilla']['perplexity'], 1)}: "
                     + "; ".join(exp_takase._verdicts(methods, others, "vanilla", "perplexity", 1)) + ".")
        strategies = [k for k in others if k != "universal"]
        notes.append(f"Language modelling, {LN[norm]}, the strategies (M={n}, N={2 * n}) against Universal "
                     f"{stats.fmt(methods['universal']['perplexity'], 1)}: "
                     + "; ".join(exp_takase._verdicts(methods, strategies, "universal", "perplexity", 1)) + ".")
    return notes
