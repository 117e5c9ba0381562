"""Experiment "lm": Takase & Kiyono's strategies on language modelling (they report LM besides
translation), with the decoder-only model (``models.DecoderLM``) on the corpus of the settings (``lm_corpus``).

At equal parameters: Vanilla (M = N = n), Universal (M = 1 at n positions, hidden size and FFN
widened until its parameters are closest to Vanilla's, embedding included: E = H) and Sequence,
Cycle and Cycle (rev) with M = n layers at N = 2n positions; each again on its own schedule at equal
multiply-accumulates (counted) and at equal measured time (timed before training), each
comparison declared by that name (``takase_arms.BUDGETS``). Held-out perplexity over seeds; speed
measured back to back before training, as in the "takase" experiment (whose pieces this reuses).
Beside the models: two count models of the training tokens (``minishare.analysis.count_lm``),
scored on the same held-out windows.
"""
import math


from minishare.analysis.count_lm import count_baselines
from minishare.experiments import claims as ledger, stats, takase_arms
from minishare.experiments.common import corpus_name, tokenizer_vocab_size
from minishare.experiments.takase_arms import LN

NAME = "lm"
TITLE = "Takase & Kiyono's strategies on language modelling"
ORDER = 100
READS = ("lm_batch_size", "lm_corpus", "lm_equal_compute", "lm_evals", "lm_layers", "lm_lrs", "lm_model",
         "lm_norm", "lm_seq_len", "lm_steps", "timing_repeats", "vocab_size")


def _plan(settings):
    """The methods at equal parameters (``takase_arms.variants``), with the LM's LN position, and
    their updates at equal multiply-accumulates (attention counted at the window length), as
    {"equal_compute": {key: updates}}; none where the settings leave the budgeted runs out
    (``lm_equal_compute``). The equal-time budget is measured, not planned (``timing``)."""
    V = tokenizer_vocab_size(settings.lm_corpus, settings.vocab_size)
    vs = takase_arms.variants("lm", V, settings.lm_model, settings.lm_layers, settings.lm_norm, efficiency=False)
    if not settings.lm_equal_compute:
        return vs, {}
    return vs, {"equal_compute": takase_arms.equal_compute_steps("lm", V, vs, settings.lm_steps, settings.lm_seq_len)}


def _request(settings, variant, seed, steps=None):
    steps = steps or settings.lm_steps
    return dict(task="lm", overrides=variant["overrides"], corpus=settings.lm_corpus, vocab_size=settings.vocab_size,
                seq_len=settings.lm_seq_len, steps=steps, batch_size=settings.lm_batch_size,
                lr=settings.lm_lrs[variant["method"]], eval_every=max(steps // settings.lm_evals, 1), seed=seed)


def _name(settings, key, v, seed, steps=None):
    """A run's name; ``steps``: the updates of a run at equal multiply-accumulates or at equal
    measured time (the others make S)."""
    budget = "" if steps is None else f"-{steps}steps"
    return f"lm-{settings.lm_norm}ln-{takase_arms.slug(key, v['M'], v['N'])}{budget}-s{seed}"


def _names(settings):
    return (lambda key, v, seed, steps=None: _name(settings, key, v, seed, steps),
            lambda key, v, seed, steps=None: _request(settings, v, seed, steps))


def requests(settings, out=None):
    """One training run per (method, seed), and one per (method other than Vanilla, seed) at equal
    multiply-accumulates and at equal measured time (timed once and kept in ``out``; none
    without it)."""
    vs, budgets = _plan(settings)
    if budgets and out is not None:
        budgets = {**budgets, "equal_time": takase_arms.equal_time_steps(settings.lm_steps, timing(out, settings))}
    return takase_arms.method_requests(vs, budgets, settings.lm_steps, settings.seeds, *_names(settings))


def timing(out, settings):
    """{method: measured seconds of one training step} (``takase_arms.kept_step_times``)."""
    vs, _ = _plan(settings)
    return takase_arms.kept_step_times(out, "lm", "lm", {k: v["overrides"] for k, v in vs.items()},
                                       settings.lm_batch_size, settings.timing_repeats, seq_len=settings.lm_seq_len,
                                       vocab_size=settings.vocab_size)


def run(out, settings, progress=True):
    vs, budgets = _plan(settings)
    times = timing(out, settings)
    if budgets:
        budgets = {**budgets, "equal_time": takase_arms.equal_time_steps(settings.lm_steps, times)}
    name_of, request_of = _names(settings)
    methods = takase_arms.summarize(out, name_of, vs, settings.seeds, request_of, times, progress,
                                   metrics=("loss", "perplexity"), budgets=budgets)
    return {"corpus": settings.lm_corpus, "vocab_size": tokenizer_vocab_size(settings.lm_corpus, settings.vocab_size), "seq_len": settings.lm_seq_len,
            "batch_size": settings.lm_batch_size, "steps": settings.lm_steps, "seeds": list(settings.seeds),
            "n": settings.lm_layers, "lrs": {v["method"]: settings.lm_lrs[v["method"]] for v in vs.values()},
            "settings": {settings.lm_norm: methods}}


def baselines(result, settings):
    return [ledger.baseline("lm", "perplexity", name, value)
            for name, value in count_baselines(settings.lm_corpus, settings.vocab_size, settings.lm_seq_len,
                                                settings.lm_batch_size)]


# --- figures, tables, claims ---------------------------------------------------------------------------
def figures(result, folder):
    return takase_arms.convergence_figures(result, folder, "lm", {
        "equal_params": ("equal parameters", takase_arms.equal_keys, "step", takase_arms.by_step),
        **takase_arms.budget_figures(),
    }, f"Language modelling (decoder-only, V={result['vocab_size']:,})", perplexity=True)


def report(result, figs):
    n, S = result["n"], result["steps"]
    # an older result does not say how many held-out windows there were: no count models then
    counts = count_baselines(result["corpus"], result["vocab_size"], result["seq_len"], result["batch_size"]) if "batch_size" in result else []
    lines = [f"Decoder-only language model on the {corpus_name(result['corpus'])} (V = {result['vocab_size']:,} BPE, "
             f"windows of {result['seq_len']} tokens), {S} updates, seeds {result['seeds']}. Vanilla "
             f"M = N = {n}; Universal M = 1 at N = {n}, widened (H, FFN 4 H, embedding E = H) to "
             f"Vanilla's parameters; the strategies M = {n} at N = {2 * n}. Held-out loss: the mean "
             f"cross-entropy per token on fixed held-out windows, in nats; held-out perplexity: e^loss "
             f"of each run, no unit (the figure's right-hand axis reads its curves so). No model: count models "
             f"of the training tokens on the same windows. Values: mean ± std (min–max) over seeds.",
             ""]
    if "lrs" in result:
        lines += ["Learning rates, each method's own (`lm_lrs`; the full tier's were chosen by held-out loss on "
                  "tuning seed 100, which no comparison uses: the settings' comment and plan.json give the search): "
                  + ", ".join(f"{method} {lr:g}" for method, lr in result["lrs"].items()) + ".", ""]
    for norm, methods in result["settings"].items():
        lines += ["| method | M | N | H | LN | parameters | speed | held-out loss (nats) | "
                  "held-out perplexity (e^loss) |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in methods.values():
            lines.append(f"| {r['method']} | {r['M']} | {r['N']} | {r['H']} | {LN[norm]} | "
                         f"{r['params']:,} | {r['speed']:.2f} | {stats.fmt(r['loss'])} | "
                         f"{stats.fmt(r['perplexity'], 1)} |")
        for name, ppl in counts:
            lines.append(f"| no model: {name} | – | – | – | – | – | – | {math.log(ppl):.3f} | {ppl:.1f} |")
        lines.append("")
    lines += takase_arms.budget_tables(result, [("held-out loss", "loss", 3),
                                                      ("held-out perplexity", "perplexity", 1)])
    for norm, methods in result["settings"].items():
        lines += takase_arms.budget_notes(result, norm, methods)
    return "\n".join(lines)


def claims(result, seeds):
    """On held-out perplexity, per LN position: each strategy against Vanilla (primary), Universal
    against Vanilla, each strategy against Universal and, where the result has them, the runs at
    equal multiply-accumulates and at equal measured time (``takase_arms.method_claims``), all
    secondary but the first: the plan was written for equal parameters. No paper numbers: the
    paper's language-modelling runs (WikiText-103) are not transcribed in the book's sources."""
    out = takase_arms.method_claims("lm", result, seeds, "perplexity", "Held-out perplexity", digits=1, paper=False,
                                    primary_equal_time=False)
    for norm, methods in result["settings"].items():
        strategies = [k for k in methods if k not in ("vanilla", "universal")]
        out += [ledger.compare(f"lm.{norm}ln.{k}_vs_universal", "lm",
                               f"Held-out perplexity, {LN[norm]}, equal parameters", "perplexity", "lower",
                               takase_arms.arm_name(methods[k], norm), takase_arms.arm_name(methods["universal"], norm),
                               seeds, methods[k]["perplexity"]["values"], methods["universal"]["perplexity"]["values"],
                               digits=1)
                for k in strategies]
    return out


# --- the book's table ---------------------------------------------------------------------------------
BOOK_TABLES = ("lm",)


def book_tables(result, settings, said):
    """The chapter's table: every method beside the paper's row for it."""
    return {"lm": takase_arms.book_table(NAME, result, settings, "perplexity", paper=False)}

