"""The chapters' "what the papers report against what we measured" tables, generated at build time.

The *paper* column holds the papers' published numbers (each row cites its paper and
table); the *measured* column is read from the reproduction's ``book/figures/<experiment>/result.json``
when the book is built, never typed. A measurement over seeds prints as mean ± std (min–max). A
comparison between two arms is the ledger's sentence (``book/figures/claims.json``, made by
``minishare.experiments.claims``): the paired difference over seeds with its 95% interval and its
verdict, never a verdict computed here.

The result files change shape as the experiments grow. A cell whose numbers this run's result
does not hold says so ("not in this run") instead of failing the build, and a table whose
experiment has not run at all is replaced by one sentence saying which command makes it.
"""
import json
import os

from minishare.experiments import claims as ledger, stats

MISSING = "not in this run"


class _Missing(Exception):
    pass


def _get(obj, *path):
    for key in path:
        try:
            obj = obj[key]
        except (KeyError, IndexError, TypeError):
            raise _Missing(path) from None
    return obj


def num(x, digits=3):
    """A spread over seeds (mean ± std (min–max)) or a single number, as text."""
    if isinstance(x, dict) and "mean" in x:
        return stats.fmt(x, digits)
    if isinstance(x, (int, float)):
        return f"{x:,}" if isinstance(x, int) else f"{x:.{digits}f}"
    raise _Missing(x)


def pct(x):
    """An accuracy (a fraction, or a spread of fractions) in percent."""
    if isinstance(x, dict) and "mean" in x:
        scaled = {**x, **{k: 100 * x[k] for k in ("mean", "std", "min", "max")}}
        return stats.fmt(scaled, 1) + " %"
    if isinstance(x, (int, float)):
        return f"{100 * x:.1f} %"
    raise _Missing(x)


def said(figures, claim_id):
    """The ledger's sentence for one claim (``book/figures/claims.json``)."""
    path = os.path.join(figures, "claims.json")
    if not os.path.exists(path):
        raise _Missing(path)
    for c in ledger.load(path)["claims"]:
        if c["id"] == claim_id:
            return c["statement"]
    raise _Missing(claim_id)


def observations(figures, experiment):
    """The experiment's observations (``observations(result)``: facts read off one model at a
    time, such as whether it learned) of the committed result; [] without one."""
    from minishare.experiments.reproduce import EXPERIMENTS
    module = EXPERIMENTS[experiment][1]
    path = os.path.join(figures, experiment, "result.json")
    if not hasattr(module, "observations") or not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return module.observations(json.load(f)["result"])


def claims_block(figures, experiment):
    """Markdown: what this run shows for one experiment, the ledger's sentences, with its no-model
    baselines first; one line saying so when the ledger has nothing for it."""
    path = os.path.join(figures, "claims.json")
    found = ledger.load(path) if os.path.exists(path) else {"claims": [], "baselines": []}
    statements = [c["statement"] for c in found["claims"] if c["experiment"] == experiment]
    base = [b for b in found["baselines"] if b["experiment"] == experiment]
    lines = []
    if base:
        lines += [ledger.baseline_line(base), ""]
    notes = observations(figures, experiment)
    if notes:
        lines += ["Observed in this run (facts of each model alone):", ""] + [f"- {n}" for n in notes] + [""]
    if statements:
        lines += ["Paired by seed (a seed fixes the data order, the held-out set and the initialization of "
                  "every arm); an effect shows only where its 95% interval excludes zero, after Holm's "
                  "correction over the experiment's primary comparisons:", ""]
        lines += [f"- {t}" for t in statements]
    return "\n".join(lines) + "\n" if lines else f"*The ledger holds no comparison of `{experiment}` in this checkout.*\n"


def cell(fn):
    """``fn()``, or "not in this run" when the result lacks what it reads."""
    try:
        return fn()
    except (_Missing, KeyError, IndexError, TypeError, ValueError, ZeroDivisionError, StopIteration):
        return MISSING


def markdown_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in row) + " |" for row in rows]
    return "\n".join(out)


def load(figures, experiment):
    path = os.path.join(figures, experiment, "result.json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        saved = json.load(f)
    return saved.get("settings", {}), saved["result"]


def source_line(experiment, settings, counted=False):
    """The sentence under a table that says where its numbers come from: a count needs no seeds."""
    where = f"`book/figures/{experiment}/result.json`"
    if counted:
        return f"Counted from the configurations by the reproduction ({where})."
    seeds = settings.get("seeds")
    run = "the reproduction's quick run" if settings.get("quick") else "the reproduction"
    over = f", over seeds {', '.join(map(str, seeds))}" if seeds else ""
    return f"Measured by {run}{over} ({where})."


def claims_table(experiment, figures, rows_of):
    """A table of (claim, the paper reports, we measured) rows from ``rows_of(result)``."""
    loaded = load(figures, experiment)
    if loaded is None:
        return (f"*The reproduction has not run the experiment `{experiment}` in this checkout: "
                f"`python -m minishare reproduce --only {experiment}` makes it.*\n")
    settings, result = loaded
    rows = [(claim, paper, cell(lambda f=measure: f(result))) for claim, paper, measure in rows_of(settings, figures)]
    return markdown_table(("claim", "the paper reports", "we measured"), rows) + "\n\n" + \
        source_line(experiment, settings) + "\n"


# --- chapter 3 and 4: parameter counts (ALBERT Tables 1, 3, 4) ----------------------------------------
def params_table(figures, which):
    loaded = load(figures, "params")
    if loaded is None:
        return claims_table("params", figures, lambda s, f: [])
    settings, result = loaded
    rows = [(r[1], r[3], cell(lambda r=r: num(r[2]))) for r in result.get("albert", []) if r[0] in which]
    header = ("configuration", "the paper reports", "we count")
    if "Table 3" in which or "Table 4" in which:
        rows = [(f"{r[0]}: {a}", b, c) for r, (a, b, c) in
                zip([r for r in result.get("albert", []) if r[0] in which], rows)]
    return markdown_table(header, rows) + "\n\n" + source_line("params", settings, counted=True) + \
        " Counted as the reference implementation counts: each shared tensor once, the pooler included.\n"


def takase_params_table(figures):
    loaded = load(figures, "params")
    if loaded is None:
        return claims_table("params", figures, lambda s, f: [])
    settings, result = loaded
    rows = [(r[0], r[2], cell(lambda r=r: num(r[1]))) for r in result.get("takase", [])]
    return markdown_table(("configuration (M/N)", "the paper reports", "we count"), rows) + "\n\n" + \
        source_line("params", settings, counted=True) + " Transformer (base) with V = 32,000 (the paper does not print V).\n"


# --- chapter 4 and 10: ALBERT's sharing variants --------------------------------------------------------
def albert_rows(settings, figures):
    return [
        ("all-shared has far fewer parameters than not-shared",
         "ALBERT-base: 12M against 89M at E = 128 (Lan et al., 2019, Table 4)",
         lambda r: f"{_get(r, 'all-shared', 'params'):,} against {_get(r, 'not-shared', 'params'):,}, "
                   f"{_get(r, 'not-shared', 'params') / _get(r, 'all-shared', 'params'):.1f}×"),
        ("sharing everything costs some accuracy",
         "all-shared below not-shared on the downstream average (Table 4)",
         lambda r: said(figures, "albert_sharing.all_vs_not")),
        ("sharing the FFN hurts more than sharing attention",
         "shared-FFN below shared-attention (Table 4)",
         lambda r: said(figures, "albert_sharing.ffn_vs_attention")),
        ("a shared model computes as much per step",
         "sharing saves parameters, not computation (Sec. 4.3)",
         # timed back to back by the memory experiment: these runs trained side by side in parallel
         lambda r: said(figures, f"memory.time_train_N{settings['albert']['num_hidden_layers']}")),
    ]


# --- chapter 3: embedding size --------------------------------------------------------------------------
def embedding_rows(settings, figures):
    def per_E(model):
        def f(r):
            return "; ".join(f"E = {E}: {num(_get(m, 'final', 'eval_mlm_loss'))}"
                             for E, m in zip(_get(r, "E"), _get(r, "models", model)))
        return f
    return [
        ("without sharing, E matters little",
         "not-shared: 81.3, 81.7, 81.8, 82.3 at E = 64, 128, 256, 768 (Lan et al., 2019, Table 3)",
         lambda r: "held-out MLM loss, not-shared: " + per_E("not-shared")(r)),
        ("with sharing, a small E is best",
         "all-shared: 79.0, 80.1, 79.6, 79.8 at E = 64, 128, 256, 768, best at 128 (Table 3)",
         lambda r: "held-out MLM loss, all-shared: " + per_E("all-shared")(r)),
    ]


# --- chapter 7: tying -----------------------------------------------------------------------------------
def tying_rows(settings, figures):
    def pair(kind):
        def f(r):
            models = _get(r, "models")
            tied = next(v for k, v in models.items() if k.startswith(kind) and v.get("tied"))
            untied = next(v for k, v in models.items() if k.startswith(kind) and not v.get("tied"))
            return tied, untied
        return f

    def params(kind):
        return lambda r: (f"{_get(pair(kind)(r)[0], 'params'):,} tied against {_get(pair(kind)(r)[1], 'params'):,} "
                          f"untied (saves {_get(pair(kind)(r)[1], 'params') - _get(pair(kind)(r)[0], 'params'):,})")

    def loss(kind):
        return lambda r: said(figures, f"tying.{kind}")
    return [
        ("tying removes the output matrix", "saves V×H parameters (Press & Wolf, 2017)", params("plain")),
        ("tying usually lowers perplexity", "lower perplexity on language modelling (Press & Wolf, 2017)",
         loss("plain")),
        ("with a factorized embedding the V×E table is tied", "ALBERT's MLM head scores against the V×E table",
         params("factorized")),
        ("… and its effect on the loss", "not reported separately", loss("factorized")),
    ]


# --- chapter 8: SOP against NSP (ALBERT Table 5) --------------------------------------------------------
def sop_rows(settings, figures):
    return [
        ("a model trained with NSP cannot do SOP", "52.0 % on SOP (chance; Lan et al., 2019, Table 5)",
         lambda r: pct(_get(r, "nsp", "eval_sop_accuracy"))),
        ("a model trained with SOP does NSP too", "78.9 % on NSP (Table 5)",
         lambda r: pct(_get(r, "sop", "eval_nsp_accuracy"))),
        ("SOP on SOP", "86.5 % (Table 5)", lambda r: pct(_get(r, "sop", "eval_sop_accuracy"))),
        ("NSP on NSP", "(the easy task: topic alone tells it)", lambda r: pct(_get(r, "nsp", "eval_nsp_accuracy"))),
    ]


# --- chapter 9: Figure 1 --------------------------------------------------------------------------------
def layerwise_rows(settings, figures):
    def rough(key):
        return lambda r: said(figures, f"layerwise.{key}")
    return [
        ("ALBERT's L2 distances are smoother from layer to layer",
         "smoother for ALBERT-large than for BERT-large (Lan et al., 2019, Figure 1)", rough("l2")),
        ("ALBERT's angles are smoother and oscillate instead of converging to zero",
         "smoother, oscillating (Figure 1)", rough("cosine_degrees")),
    ]


# --- chapters 5 and 10: Takase & Kiyono -----------------------------------------------------------------
PAPER_TAKASE = {  # (method, N / M): (M/N in the paper, params, speed, BLEU), Takase & Kiyono Table 1
    ("vanilla", 1): ("6/6", "61M", "1.00", "26.57"),
    ("sequence", 2): ("6/12", "61M", "0.63", "27.13"), ("cycle", 2): ("6/12", "61M", "0.63", "27.04"),
    ("cycle (rev)", 2): ("6/12", "61M", "0.63", "27.08"),
    ("sequence", 3): ("6/18", "61M", "0.47", "27.02"), ("cycle", 3): ("6/18", "61M", "0.47", "27.25"),
    ("cycle (rev)", 3): ("6/18", "61M", "0.47", "27.31"),
}
PAPER_UNIVERSAL = ("1/6", "63M", "0.48", "26.90")


def paper_takase(m):
    """The paper's row for one of our configurations: the same method at the same depth ratio N / M
    (the Universal Transformer: the paper's one wide layer, whatever N)."""
    method = str(m.get("method", "")).lower()
    if method == "universal":
        return PAPER_UNIVERSAL
    try:
        return PAPER_TAKASE.get((method, m["N"] // m["M"]))
    except (KeyError, TypeError, ZeroDivisionError):
        return None


METRIC_HEADERS = {"loss": "held-out loss (nats per token)", "perplexity": "held-out perplexity (e^loss)"}


def takase_table(figures, experiment="takase", metric="loss", paper=True):
    """One row per method and LN position: the paper's row, parameters, speed, the held-out metric,
    for the seq2seq task the seeds that solved it, and the same method trained at equal compute."""
    from minishare.experiments.exp_takase import SOLVED, solved
    loaded = load(figures, experiment)
    if loaded is None:
        return claims_table(experiment, figures, lambda s, f: [])
    settings, result = loaded
    rows = []
    for norm, methods in (result.get("settings") or {}).items():
        if not isinstance(methods, dict):
            continue
        for key, m in methods.items():
            if not isinstance(m, dict):
                continue
            p = paper_takase(m) if paper else None
            row = [f"{m.get('label', key)}, {norm}-LN",
                   f"M/N = {p[0]}: {p[1]}, speed {p[2]}, BLEU {p[3]}" if p else "–",
                   cell(lambda m=m: num(_get(m, "params"))),
                   cell(lambda m=m: f"{_get(m, 'speed'):.2f}"),
                   cell(lambda m=m: num(_get(m, metric)))]
            if metric == "loss":
                row.append(cell(lambda m=m: solved(_get(m, "exact_match"))))
            row.append(cell(lambda m=m: f"{num(_get(m, 'equal_compute', metric))} "
                                        f"({_get(m, 'equal_compute', 'steps')} updates)"))
            rows.append(row)
    if not rows:
        return (f"*This run's `{experiment}` result has no per-method table the book can read.*\n\n"
                + source_line(experiment, settings) + "\n")
    header = ["configuration", "the paper reports (WMT En-De)" if paper else "the paper reports",
              "parameters", "speed vs Vanilla", METRIC_HEADERS[metric]]
    if metric == "loss":
        header.append(f"seeds solved (exact match ≥ {SOLVED:.0%})")
    header.append(f"{METRIC_HEADERS[metric]} at Vanilla's compute")
    note = (" The paper's row is the same method at the same depth ratio N / M, from Takase & Kiyono's "
            "arXiv version (2104.06022, 2021), Table 1: its speed is training speed relative to Vanilla "
            "and its BLEU the average over newstest2010-2016." if paper else
            " Takase & Kiyono's language-modelling runs (WikiText-103) are far larger than this one; their "
            "numbers are not set beside these.")
    note += (" The last column is the method trained on its own full schedule for as many updates as cost "
             "Vanilla's compute (counted multiply-accumulates per token), not a reading in the middle of "
             "a longer run.")
    return markdown_table(header, rows) + "\n\n" + source_line(experiment, settings) + note + "\n"


# --- chapter 11: memory, FLOPs, time -------------------------------------------------------------------
def memory_rows(settings, figures):
    def ratio(kind):
        return lambda r: (f"all-shared / not-shared = "
                          f"{_get(r, 'variants', 'all-shared', 'bytes', kind) / _get(r, 'variants', 'not-shared', 'bytes', kind):.2f} "
                          f"({_get(r, 'variants', 'all-shared', 'bytes', kind):,} / "
                          f"{_get(r, 'variants', 'not-shared', 'bytes', kind):,} bytes)")

    def time_ratio(r):
        deepest = len(_get(r, "sweep", "not-shared")) - 1
        a, b = _get(r, "sweep", "all-shared", deepest), _get(r, "sweep", "not-shared", deepest)
        return (f"training step at N = {_get(r, 'depths', deepest)}: all-shared / not-shared = "
                f"{_get(a, 'train') / _get(b, 'train'):.2f} (median seconds {_get(a, 'train'):.4f} / "
                f"{_get(b, 'train'):.4f})")
    return [
        ("sharing shrinks the parameters", "by the number of positions per set (Lan et al., 2019, Sec. 3.1)",
         ratio("parameters")),
        ("… and the optimizer state with them", "fewer parameters, less state and communication (Lan et al., 2019)", ratio("optimizer")),
        ("the activations stay", "every position still runs (Sec. 4.3: no faster)", ratio("activations")),
        ("the time stays", "ALBERT-xxlarge about 3× slower than BERT-large (Sec. 4.3)", time_ratio),
    ]


def flops_rows(settings, figures):
    def row(name, key):
        def f(r):
            p = next(p for p in _get(r, "presets") if p["name"] == name)
            return key(p)
        return f
    return [
        ("ALBERT-xxlarge has fewer parameters than BERT-large", "235M against 334M (Table 1)",
         row("albert-xxlarge", lambda p: f"{p['parameters']:,} counted, {p['params_vs_bert-large']:.2f}× BERT-large")),
        ("… and computes more per token", "about 3× slower to train (Sec. 4.3)",
         row("albert-xxlarge", lambda p: f"{p['forward_gflops']:.2f} GFLOPs per token forward, "
                                         f"{p['flops_vs_bert-large']:.2f}× BERT-large (T = 512)")),
    ]


# --- chapter 12: communication of data-parallel training ----------------------------------------------
def communication_table(figures):
    """The Allreduce bytes of ALBERT's four variants at the ALBERT-base shape (counted) and the
    step timed on 2 ranks (compute against Allreduce, over rounds)."""
    loaded = load(figures, "communication")
    if loaded is None:
        return claims_table("communication", figures, lambda s, f: [])
    settings, result = loaded
    counted, ring = result.get("counted", {}), result.get("ring_bytes", {})
    Ks = result.get("ranks", [])
    mb = lambda n: f"{n / 1e6:,.1f}"
    rows = [(name, cell(lambda r=r: f"{_get(r, 'parameters'):,}"), cell(lambda r=r: mb(_get(r, "bytes"))),
             cell(lambda r=r: f"{_get(r, 'bytes') / _get(counted, 'not-shared', 'bytes'):.3f}"),
             *[cell(lambda name=name, K=K: mb(_get(ring, name, str(K)))) for K in Ks])
            for name, r in counted.items()]
    text = markdown_table(("variant", "distinct parameters", "gradient MB per step", "vs not-shared",
                           *[f"MB sent per rank, K = {K}" for K in Ks]), rows)
    text += ("\n\nCounted at the ALBERT-base shape (V = 30,000, E = 128, H = 768, N = 12) for the "
             "pre-training model with its heads, each distinct tensor once, float32; a ring Allreduce "
             "sends 2 (K − 1) / K of the buffer from each rank. MB = 10^6 bytes.\n")
    timed = result.get("timed")
    if not timed:
        why = result.get("timed_missing", "no timing in this result")
        return text + f"\nThe timed step is not in this run: {why}.\n\n" + source_line("communication", {**settings, "seeds": None}) + "\n"
    model = result.get("timing_model", {})
    times = timed.get("times", {})
    rows = [(name, cell(lambda name=name: f"{_get(timed, 'buffer_bytes', name):,}"),
             cell(lambda name=name: num(stats.spread(_get(times, name, "compute_wall")), 4)),
             cell(lambda name=name: num(stats.spread(_get(times, name, "allreduce_wall")), 5)))
            for name in times]
    text += ("\n" + markdown_table(("variant", "buffer bytes", "compute s per step", "Allreduce s per step"), rows)
             + f"\n\nTimed on {model.get('ranks', '?')} ranks of one machine (albert-tiny shape, N = "
             f"{model.get('num_hidden_layers', '?')}, global batch {' × '.join(map(str, model.get('batch', [])))}), "
             f"{model.get('rounds', '?')} rounds, one step of each variant per round: mean ± std (min–max) "
             "over the rounds. Compute: forward and backward of a rank's share; Allreduce: after a barrier, "
             "so the wait for the slower rank is not in it.\n\n" + source_line("communication", {**settings, "seeds": None}) + "\n")
    return text


# --- chapter 6: ACT -------------------------------------------------------------------------------------
def act_rows(settings, figures):
    def mean(stack):
        return lambda r: num(stats.spread([_get(s, "ponder", stack, "mean") for s in _get(r, "seeds").values()]), 2)
    return [
        ("ACT spends more steps on some positions than on others",
         "ponder time varies by position and token (Dehghani et al., 2018)",
         lambda r: "encoder " + mean("encoder")(r) + " steps per token, decoder " + mean("decoder")(r)
                   + f", of at most {_get(r, 'max_steps')}"),
    ]


# --- chapter 14: looped depth -------------------------------------------------------------------------
def looped_rows(settings, figures):
    from minishare.experiments import exp_looped

    def beyond(arm, r=None):
        def f(res):
            rr = None if r is None else r(res)
            return pct(stats.spread([exp_looped.beyond_accuracy(res, s, arm, rr) for s in _get(res, "seeds")]))
        return f

    def peaks(res):
        return ", ".join(str(exp_looped.best_r(res, s)[0]) for s in _get(res, "seeds"))
    return [
        ("accuracy rises with test-time iterations",
         "recurrent depth: accuracy on reasoning benchmarks rises with test-time iterations (Geiping et al., "
         "2025); a looped Transformer matches a standard one on in-context linear regression with under "
         "10% of its parameters (Yang et al., 2023)",
         lambda res: f"beyond training: {beyond('looped', lambda x: 1)(res)} at r = 1, "
                     f"{beyond('looped', lambda x: x['mean_iterations'])(res)} at r = r̄ = {res['mean_iterations']}, "
                     f"{beyond('looped', exp_looped.long_r)(res)} at r = {exp_looped.long_r(res)}"),
        ("against not-shared models of the same parameters and the same compute", "not reported on this task",
         lambda res: f"same parameters {beyond(exp_looped.ARMS[1])(res)}, same compute {beyond(exp_looped.ARMS[2])(res)}"),
        ("where more iterations stop helping", "not reported on this task",
         lambda res: f"accuracy beyond training peaks at r = {peaks(res)} (per seed)"),
    ]


def regularizer_rows(settings, figures):
    def gap(v):
        return lambda r: num(_get(r, "models", v, "gap"))
    return [(f"train/held-out gap, {v}", "not reported", gap(v))
            for v in ("not-shared", "all-shared", "shared-attention", "shared-ffn")]


# --- chapter 15: convert, don't retrain ------------------------------------------------------------------
def relaxed_rows(settings, figures):
    def loss(name):
        return lambda r: num(_get(r, "arms", name, "loss"))
    return [
        ("tying the trained layers into M sets costs loss before any training",
         "the paper uptrains every converted model before it evaluates it (Bae et al., 2024)",
         lambda r: f"not-shared {loss('not-shared, trained')(r)}, recursive as converted "
                   f"{loss('recursive, converted')(r)}"),
        ("uptrained, the converted model beats the same stack trained from scratch",
         "a recursive Gemma 1B from Gemma 2B gains up to 13.5 points over a Gemma 1B from scratch (Bae et al., 2024)",
         lambda r: said(figures, "relaxed.uptrained_vs_scratch")),
        ("the layer-wise LoRA recovers more of the original as r grows",
         "relaxed models close most of the gap to the full-size model (Bae et al., 2024)",
         lambda r: said(figures, "relaxed.relaxed_vs_recursive")),
        ("Basis Sharing compresses without training",
         "outperforms SVD-based compression at 20–50% compression on LLaMA (Wang et al., 2024, Table 1)",
         lambda r: "; ".join(f"k = {k}: {_get(r, 'arms', f'basis sharing k = {k}', 'params'):,} parameters, "
                             f"{loss(f'basis sharing k = {k}')(r)}" for k in _get(r, "basis_ranks"))),
    ]


# --- chapter 16: tokens that choose their depth ---------------------------------------------------------
def mor_rows(settings, figures):
    def accuracy(arm):
        return lambda res: pct(stats.spread([_get(res, "seeds", s, arm, "accuracy") for s in _get(res, "seeds")]))

    def passes(arm):
        return lambda res: num(stats.spread([_get(res, "seeds", s, arm, "passes") for s in _get(res, "seeds")]))
    return [
        ("at equal compute, MoR beats a recursive model whose every token takes every pass",
         "at equal training FLOPs, and with fewer parameters, MoR reaches a lower validation perplexity than "
         "the vanilla and recursive baselines, from 135M to 1.7B parameters (Bae et al., 2025, abstract)",
         lambda res: said(figures, "mor.vs_fixed_same_passes")),
        ("MoR beside ACT on the same task", "not compared in the paper",
         lambda res: f"MoR {accuracy('MoR')(res)} at {res['mor_mean_passes']:g} passes, ACT {accuracy('ACT')(res)} "
                     f"at {passes('ACT')(res)} passes; " + said(figures, "mor.vs_act")),
        ("the router gives harder tokens more recursions",
         "in the paper's routing example (its Figure 1), tokens that carry content take more recursion "
         "steps than function words (Bae et al., 2025)",
         lambda res: said(figures, "mor.mor_deep_vs_shallow")),
    ]


def tables(figures):
    """{name: Markdown} of every table the chapters include."""
    return {
        "params_table1": params_table(figures, ("Table 1",)),
        "params_table34": params_table(figures, ("Table 3", "Table 4")),
        "params_takase": takase_params_table(figures),
        "albert_sharing": claims_table("albert_sharing", figures, albert_rows),
        "embedding_size": claims_table("embedding_size", figures, embedding_rows),
        "tying": claims_table("tying", figures, tying_rows),
        "sop_nsp": claims_table("sop_nsp", figures, sop_rows),
        "layerwise": claims_table("layerwise", figures, layerwise_rows),
        "takase": takase_table(figures, "takase", "loss"),
        "lm": takase_table(figures, "lm", "perplexity", paper=False),
        "memory": claims_table("memory", figures, memory_rows),
        "communication": communication_table(figures),
        "flops": claims_table("flops", figures, flops_rows),
        "act": claims_table("act", figures, act_rows),
        "regularizer": claims_table("regularizer", figures, regularizer_rows),
        "looped": claims_table("looped", figures, looped_rows),
        "relaxed": claims_table("relaxed", figures, relaxed_rows),
        "mor": claims_table("mor", figures, mor_rows),
    }
