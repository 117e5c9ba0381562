"""Takase & Kiyono's methods as arms of an experiment, shared by the experiments that compare them
(``exp_takase`` on a sequence-to-sequence task, ``exp_lm`` on language modelling): the methods
and their sizes (Universal widened to Vanilla's parameters), the updates at equal
multiply-accumulates (counted) and at equal measured time (timed before training), the runs of every
method and seed, their summary, the convergence figures and tables, and the paired claims
between methods.

Three comparisons, each declared by its name wherever it is reported (``BUDGETS``):

* equal parameters: every method trained for the same S updates;
* equal multiply-accumulates: each method for S_k = S · C_Vanilla / C_k updates, C counted from
  its configuration (``macs_per_token``);
* equal measured time: each method for S_k = S · t_Vanilla / t_k updates, t the measured seconds
  of one of its training steps (``kept_step_times``). A count of multiply-accumulates is not a
  time: a wide layer does its products in fewer, larger matrix products than a deep stack, so on
  one machine Universal ran at 0.84 of Vanilla's speed where its count says 0.49.
"""
import json
import os

from minishare import optim, safeio
from minishare.analysis import count_parameters, memory, training_figures
from minishare.analysis.figure_style import save_figure
from minishare.experiments import book_cells as cells, claims as ledger, runs, stats
from minishare.experiments.runs import cached_run
from minishare.files import atomic_write
from minishare.models import DecoderLM
from minishare.nn import init
from minishare.run.build import build_model, make_config, make_task
from minishare.train import parameter_groups


STRATEGIES = (("Sequence", "sequence"), ("Cycle", "cycle"), ("Cycle (rev)", "cycle-rev"))
LN = {"post": "Post-LN", "pre": "Pre-LN"}
# what a history keeps in result.json: the training loss for the curves, the held-out metrics
KEEP = ("step", "loss", "eval_loss", "eval_exact_match", "eval_perplexity")
# Held-out exact match at which a run counts as having solved the task. On "reverse" a run ends
# either near 0 (the plateau: the right length, the wrong letters) or near 1; 0.9 lies in that gap,
# and a run caught while leaving the plateau (exact match 0.5) does not count.
SOLVED = 0.9
PAPER = "Takase & Kiyono (arXiv 2104.06022, 2021), Table 1, WMT En-De, BLEU (higher is better)"
# (method, N / M) -> (M/N, BLEU, speed relative to Vanilla) in that table; Universal is M = 1, N = 6
PAPER_TABLE = {("Vanilla", 1): ("6/6", 26.57, 1.00), ("Universal", None): ("1/6", 26.90, 0.48),
               ("Sequence", 2): ("6/12", 27.13, 0.63), ("Cycle", 2): ("6/12", 27.04, 0.63),
               ("Cycle (rev)", 2): ("6/12", 27.08, 0.63), ("Sequence", 3): ("6/18", 27.02, 0.47),
               ("Cycle", 3): ("6/18", 27.25, 0.47), ("Cycle (rev)", 3): ("6/18", 27.31, 0.47)}


def count(config, lm=False):
    """Parameters of the encoder-decoder (``lm=False``) or the decoder-only LM built from
    ``config``, each shared tensor once, built shape-only (nothing allocated)."""
    if not lm:
        return count_parameters(config)
    with init.shape_only():
        return count_parameters(DecoderLM(config))


def universal_hidden_size(config, target, lm=False):
    """The hidden size H of a Universal model (M = 1) whose parameters come closest to ``target``.

    Takase & Kiyono widen the whole layer, not the FFN alone: their Universal baseline has 63M
    parameters against Vanilla's 61M, which is one layer with d = 1024, d_ff = 4096 against six
    with d = 512, d_ff = 2048. So the FFN stays 4 H and the number of attention heads stays that of
    ``config`` (H runs over its multiples). The embedding widens with H too (E = H), as theirs.
    ``config`` is the Vanilla TransformerConfig; the count grows with H, so the search walks up
    until it passes ``target`` and keeps the closer of the last two sizes."""
    heads = config.num_attention_heads

    def params(H):
        fields = {**config.to_dict(), "hidden_size": H, "intermediate_size": 4 * H,
                  "embedding_size": H, "sharing": "universal", "num_unique_layers": None}
        return count(type(config)(**fields), lm)
    H = heads
    while params(H) < target:
        H += heads
    return H if H == heads or params(H) - target <= target - params(H - heads) else H - heads


def variants(task, vocab_size, model, n, norm, efficiency=True):
    """The methods compared, as {key: {"method", "label", "M", "N", "H", "overrides"}}: Vanilla (n/n),
    Universal (1/n, widened), the three strategies at M = n, N = 2n and, with ``efficiency``,
    at N = 3n. ``model``: the Vanilla model's TransformerConfig fields; ``task`` "lm" sizes the
    decoder-only LM, any other the encoder-decoder."""
    lm = task == "lm"
    base = {**model, "num_hidden_layers": n, "norm_position": norm}
    H = model["hidden_size"]
    out = {"vanilla": dict(method="Vanilla", label=f"Vanilla (M={n}, N={n}, H={H})", M=n, N=n, H=H,
                           overrides={**base, "sharing": "not-shared"})}
    vanilla = make_config(task, vocab_size, overrides=base)
    Hu = universal_hidden_size(vanilla, count(vanilla, lm), lm)
    out["universal"] = dict(method="Universal", label=f"Universal (M=1, N={n}, H={Hu})", M=1, N=n, H=Hu,
                            overrides={**base, "sharing": "universal", "hidden_size": Hu,
                                       "intermediate_size": 4 * Hu})
    for factor in (2, 3) if efficiency else (2,):
        for name, strategy in STRATEGIES:
            out[f"{strategy}-n{factor * n}"] = dict(
                method=name, label=f"{name} (M={n}, N={factor * n}, H={H})", M=n, N=factor * n, H=H,
                overrides={**base, "sharing": strategy, "num_unique_layers": n,
                           "num_hidden_layers": factor * n})
    return out


def equal_keys(methods):
    """The keys of the equal-parameter comparison: Vanilla, Universal and the strategies at N = 2n."""
    return [k for k, r in methods.items() if k in ("vanilla", "universal") or r["N"] == 2 * methods["vanilla"]["N"]]


def efficiency_keys(methods):
    deep = [k for k, r in methods.items() if r["N"] == 3 * methods["vanilla"]["N"]]
    return ["vanilla", "universal"] + deep if deep else []


def macs_per_token(config, lm, seq_len):
    """Multiply-accumulates of the matrix products of one forward pass, per target token, as
    ``minishare.analysis.flops`` counts them (a training step costs about 3× this for every model
    alike, so the factor cancels in a ratio). A self-attention of a position: 4 H² (query, key,
    value, output) + 2 T H (scores and weighted values over T keys); its FFN 2 H I; a decoder
    position of the encoder-decoder adds a cross-attention, counted like a self-attention with one
    source token per target token (so in the copy family, up to the end token); the output layer
    H V. E = H in every model here (no embedding projection), and sharing does not enter: every
    position computes."""
    H, I, V, T = config.hidden_size, config.intermediate_size, config.vocab_size, seq_len
    attention = 4 * H * H + 2 * T * H
    layer = attention + 2 * H * I
    stacks = config.num_hidden_layers * layer
    if not lm:
        stacks += config.num_decoder_layers * (layer + attention)
    return stacks + H * V


def equal_compute_steps(task, vocab_size, vs, steps, seq_len):
    """{key: updates} of the equal-parameter methods of ``vs`` at Vanilla's compute: S_k =
    S · C_Vanilla / C_k (``macs_per_token`` at length ``seq_len``), rounded; Vanilla keeps S."""
    cost = {k: macs_per_token(make_config(task, vocab_size, overrides=vs[k]["overrides"]), task == "lm", seq_len)
            for k in equal_keys(vs)}
    return {k: max(1, round(steps * cost["vanilla"] / c)) for k, c in cost.items()}


def equal_time_steps(steps, times):
    """{key: updates} at Vanilla's measured time: S_k = S · t_Vanilla / t_k, rounded, for every
    method of ``times`` ({key: measured seconds of one training step}); Vanilla keeps S."""
    return {k: max(1, round(steps * times["vanilla"] / t)) for k, t in times.items()}


def slug(key, M, N):
    return f"{key.rsplit('-n', 1)[0]}-m{M}-n{N}"


def extra_runs(budget, steps):
    """The budgeted updates that need runs of their own: {key: S_k} where S_k differs from S
    (a method whose budget is S reads its S-update runs). Two budgets that come to the same S_k
    name the same run, trained once."""
    return {k: s for k, s in budget.items() if s != steps}


def method_requests(vs, budgets, steps, seeds, name_of, request_of):
    """{run name: request}: one run per (method, seed) of S = ``steps`` updates, and one per
    (budget, method, seed) whose updates in ``budgets`` ({budget name: {key: S_k}}) differ from S.
    ``name_of(key, v, seed, steps=None)`` and ``request_of(key, v, seed, steps=None)`` make the
    name and the run_training arguments."""
    out = {}
    for key, v in vs.items():
        for seed in seeds:
            out[name_of(key, v, seed)] = request_of(key, v, seed)
    for budget in budgets.values():
        for key, s in extra_runs(budget, steps).items():
            for seed in seeds:
                out[name_of(key, vs[key], seed, s)] = request_of(key, vs[key], seed, s)
    return out


def step_times(task, configs, batch_size, rounds, seq_len=64, vocab_size=1000):
    """Median seconds of one training step (forward, backward, AdamW) of each configuration
    ({key: TransformerConfig overrides}) on one fixed batch of ``task``. The configurations take
    turns within each of ``rounds`` rounds, so a slow spell of a shared machine hits all of them
    alike; each gets the median over rounds of ``memory.step_time`` (median of 3 steps)."""
    t, V = make_task(task, 0, batch_size, seq_len, vocab_size=vocab_size)
    batch = t.batch(0)
    models = {}
    for key, overrides in configs.items():
        model = build_model(task, make_config(task, V, overrides=overrides, seq_len=seq_len))
        models[key] = (model, optim.AdamW(parameter_groups(model, 0.01)))
    times = {key: [] for key in configs}
    for _ in range(rounds):
        for key, (model, optimizer) in models.items():
            times[key].append(memory.step_time(model, lambda m: t.loss(m, batch)[0], optimizer,
                                               repeats=3, warmup=1)["train"])
    return {key: sorted(ts)[len(ts) // 2] for key, ts in times.items()}


def _step_times(args):
    """Worker: ``step_times(*args)``."""
    return step_times(*args)


def kept_step_times(out, name, task, configs, batch_size, rounds, seq_len=64, vocab_size=1000):
    """``step_times`` of ``configs`` ({key: TransformerConfig overrides}), measured once in a
    worker process with one BLAS thread (as every training run has: ``runs.Workers``) while
    nothing of this pipeline trains, and kept in ``out/<name>_step_times.json`` with what they
    are the times of. Every later call with the same arguments reads them back, so the
    equal-time runs that are asked for, the ones trained and the speeds reported agree; ``out``
    None measures and keeps nothing."""
    args = (task, configs, batch_size, rounds, seq_len, vocab_size)
    key = json.dumps(args, sort_keys=True, default=str)
    path = None if out is None else os.path.join(out, f"{name}_step_times.json")
    if path is not None and os.path.exists(path):
        kept = safeio.load_json(path, limit=1 << 20)
        if isinstance(kept, dict) and kept.get("of") == key:
            return kept["seconds"]
    with runs.worker_pool(1) as pool:
        times = pool.map(_step_times, [args])[0]
    if path is not None:
        os.makedirs(out, exist_ok=True)
        with atomic_write(path) as f:
            json.dump({"of": key, "seconds": times}, f, indent=1)
    return times


def _thin(history):
    return [{k: row[k] for k in KEEP if k in row} for row in history]


def _finals(runs, metrics):
    return {m: stats.spread([r["final"][f"eval_{m}"] for r in runs]) for m in metrics}


def summarize(out, name_of, vs, seeds, request_of, timing, progress, metrics, budgets):
    """Load (or train) every run of ``vs`` and gather, per method: parameters, step time, relative
    speed, thinned histories per seed and the spread of each final held-out metric; for the
    methods of each budget of ``budgets`` ({"equal_compute" or "equal_time": {key: updates}}) the
    same of its budgeted runs under the budget's name. ``timing``: {key: measured seconds of a
    training step}, the equal-time budget's t.
    ``name_of(key, v, seed, steps=None)`` and ``request_of(key, v, seed, steps=None)`` name and
    describe a run (``steps``: a budgeted run's updates)."""
    result = {}
    for key, v in vs.items():
        runs = [cached_run(out, name_of(key, v, seed), progress, **request_of(key, v, seed)) for seed in seeds]
        histories = [_thin(r["history"]) for r in runs]
        steps = int(histories[0][-1]["step"])
        result[key] = {**{k: v[k] for k in ("method", "label", "M", "N", "H")},
                       "params": count_parameters(runs[0]["model"]), "steps": steps,
                       "step_time": timing[key], "speed": timing["vanilla"] / timing[key],
                       "histories": histories, **_finals(runs, metrics)}
        for at, budget in budgets.items():
            if key not in budget:
                continue
            own = extra_runs(budget, steps).get(key)
            budgeted = runs if own is None else [cached_run(out, name_of(key, v, seed, own), progress,
                                                            **request_of(key, v, seed, own)) for seed in seeds]
            result[key][at] = {"steps": budget[key], "histories": [_thin(r["history"]) for r in budgeted],
                               **_finals(budgeted, metrics)}
    return result


# The comparisons at a budget other than equal updates: {result key: (its declared name, the
# quantity matched, the axis its curves are drawn against)}. "equal_compute" is the count of
# multiply-accumulates (the key older results carry), "equal_time" the measured time.
BUDGETS = {"equal_compute": ("equal multiply-accumulates", "C the multiply-accumulates of a step's matrix "
                             "products, counted from the configuration", "multiply-accumulates, in Vanilla's updates"),
           "equal_time": ("equal measured time", "t the measured seconds of one of its training steps (the "
                          "speed column's, measured before training)", "measured time, in Vanilla's updates")}


def budget_caption(at):
    return f"equal parameters at {BUDGETS[at][0]}, each method on its own schedule"


def arm_name(r, norm, at=None):
    """A method as a claim names it: its label with the LN position, and the budget it was
    trained to (``at``: a key of ``BUDGETS``) where that is not S updates."""
    return f"{r['label']}, {LN[norm]}" + ("" if at is None else f", at {BUDGETS[at][0]}")


def by_step(methods, key):
    return methods[key]["histories"]


def by_budget(at):
    """The curves of a budget's runs against the budget in Vanilla's updates (step × S / S_k),
    so every method's curve ends at S."""
    def curves(methods, key):
        c = methods[key][at]
        scale = methods["vanilla"]["steps"] / c["steps"]
        return [[{**row, BUDGETS[at][2]: row["step"] * scale} for row in h] for h in c["histories"]]
    return curves


def budget_keys(at):
    """The keys of the methods ``methods`` has runs of budget ``at`` for."""
    return lambda methods: [k for k in equal_keys(methods) if at in methods[k]]


def budget_figures():
    """The convergence-figure groups (``convergence_figures``) of every budget, by file suffix."""
    return {at: (budget_caption(at), budget_keys(at), BUDGETS[at][2], by_budget(at)) for at in BUDGETS}


def convergence_figures(result, folder, prefix, groups, title, perplexity=False):
    """One figure per (LN position, group): ``groups`` maps a file suffix to (caption, keys, x,
    curves), ``curves(methods, key)`` giving the histories that ``x`` is read from. The LN position
    is in the title, so the legend names each method once. ``perplexity``: a second axis reads the
    loss as perplexity (``training_figures.plot_convergence``)."""
    figs = []
    for norm, methods in result["settings"].items():
        for suffix, (caption, keys, x, curves) in groups.items():
            keys = keys(methods)
            if len(keys) < 2:
                continue
            histories = {methods[k]["label"]: curves(methods, k) for k in keys}
            n_seeds = len(result["seeds"])
            fig = training_figures.plot_convergence(histories, x=x, y="loss", eval_y="eval_loss",
                                                    title=f"{title}, {LN[norm]}:\n{caption}",
                                                    perplexity=perplexity)
            figs.append((f"{title}: {caption} ({LN[norm]}, {n_seeds} seeds, mean with a min–max band)",
                         save_figure(fig, f"{folder}/{prefix}_{suffix}_{norm}ln")))
    return figs


def budget_notes(result, norm, methods):
    """One sentence per budget the result has runs of: each method's updates, and for equal
    measured time the step times they came from."""
    notes = []
    for at, (name, _, _) in BUDGETS.items():
        keys = [k for k in budget_keys(at)(methods) if k != "vanilla"]
        if not keys:
            continue
        timed = at == "equal_time"
        notes.append(f"{LN[norm]}, {name}: the updates that cost what Vanilla's {result['steps']} cost"
                     + (f" (Vanilla {methods['vanilla']['step_time'] * 1e3:.1f} ms a step)" if timed else "")
                     + ": " + ", ".join(f"{methods[k]['label']} {methods[k][at]['steps']}"
                                        + (f" ({methods[k]['step_time'] * 1e3:.1f} ms)" if timed else "")
                                        for k in keys) + ".")
    return notes


def solved(s):
    """"k of n": the seeds whose held-out exact match (a spread) reaches ``SOLVED``."""
    return f"{sum(v >= SOLVED for v in s['values'])} of {s['n']}"


def budget_tables(result, columns):
    """The table of each budget and LN position: each method's updates S_k and its final held-out
    metrics, ``columns`` as (header, metric, digits) (exact match adds its solved count), under
    the comparison's declared name; one sentence for a budget the result has no runs of (the
    settings left them out)."""
    S, lines = result["steps"], []
    counted = any(metric == "exact_match" for _, metric, _ in columns)
    header = ["method", "M", "N", "H", "LN", "updates"] + [h for h, _, _ in columns] + \
        ([f"solved (exact match ≥ {SOLVED})"] if counted else [])
    for at, (name, matched, _) in BUDGETS.items():
        if not any(budget_keys(at)(methods) for methods in result["settings"].values()):
            lines += [f"{name.capitalize()}: not in this run (its settings leave these runs out).", ""]
            continue
        symbol = "C" if at == "equal_compute" else "t"
        lines += [f"{name.capitalize()}: each equal-parameter method trained again on its own schedule, for "
                  f"S_k = {S} · {symbol}_Vanilla / {symbol}_k updates, with {matched}.", ""]
        for norm, methods in result["settings"].items():
            lines += [f"**{LN[norm]}, {name}**", "", "| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
            for k in budget_keys(at)(methods):
                r, c = methods[k], methods[k][at]
                cells = [r["method"], r["M"], r["N"], r["H"], LN[norm], c["steps"]] + \
                    [stats.fmt(c[metric], digits) for _, metric, digits in columns] + \
                    ([solved(c["exact_match"])] if counted else [])
                lines.append("| " + " | ".join(map(str, cells)) + " |")
            lines.append("")
    return lines


def _paper(a, b):
    """The paper's numbers for method a against method b, or None where it has no such row."""
    def row(r):
        return PAPER_TABLE.get(("Universal", None) if r["method"] == "Universal" else (r["method"], r["N"] // r["M"]))
    pa, pb = row(a), row(b)
    if pa is None or pb is None:
        return None
    return (f"{PAPER}: {a['method']} (M/N = {pa[0]}) {pa[1]:.2f} at speed {pa[2]:.2f} against "
            f"{b['method']} (M/N = {pb[0]}) {pb[1]:.2f} at speed {pb[2]:.2f}")


def method_claims(experiment, result, seeds, metric, what, digits=3, paper=True, better="lower", primary=True,
                  suffix="", primary_equal_time=True):
    """The comparisons of Takase & Kiyono's methods on held-out ``metric`` (``better``: "lower" or
    "higher"), per LN position, each named by the comparison it is:

    * equal parameters (S updates each): each strategy at N = 2n against Vanilla (primary),
      Universal against Vanilla;
    * efficiency at equal updates, where the result has strategies at N = 3n: each against
      Universal (primary; the paper's pair, about as fast as Universal there);
    * equal multiply-accumulates: each method's budgeted run against Vanilla's;
    * equal measured time: each strategy against Universal (primary with ``primary_equal_time``:
      the paper's efficiency question, which sharing uses a fixed time better, asked of the
      runs that had the same time) and each method against Vanilla.

    ``primary=False`` makes every one secondary (a metric read beside the primary one); ``suffix``
    ends their ids."""
    out, main = [], primary
    for norm, methods in result["settings"].items():
        def claim(a, b, kind, primary, at=None):
            x, y = (methods[k] if at is None else methods[k][at] for k in (a, b))
            primary = primary and main
            return ledger.compare(
                f"{experiment}.{norm}ln.{a}_vs_{b}{'' if at is None else '.' + at}{suffix}", experiment,
                f"{what}, {LN[norm]}, {kind}", metric, better, arm_name(methods[a], norm, at),
                arm_name(methods[b], norm, at), seeds, x[metric]["values"], y[metric]["values"],
                _paper(methods[a], methods[b]) if paper and at is None else None, primary, digits)
        deep = [k for k in equal_keys(methods) if k not in ("vanilla", "universal")]
        out += [claim(k, "vanilla", "equal parameters", True) for k in deep]
        out.append(claim("universal", "vanilla", "equal parameters", False))
        out += [claim(k, "universal", "efficiency at equal updates", True)
                for k in efficiency_keys(methods) if k not in ("vanilla", "universal")]
        kind = "{}, each on its own schedule"
        out += [claim(k, "vanilla", kind.format(BUDGETS["equal_compute"][0]), False, "equal_compute")
                for k in budget_keys("equal_compute")(methods) if k != "vanilla"]
        timed = budget_keys("equal_time")(methods)
        if "universal" in timed:
            out += [claim(k, "universal", kind.format(BUDGETS["equal_time"][0]), primary_equal_time, "equal_time")
                    for k in timed if k not in ("vanilla", "universal")]
        out += [claim(k, "vanilla", kind.format(BUDGETS["equal_time"][0]), False, "equal_time")
                for k in timed if k != "vanilla"]
    return out


# --- the book's table ---------------------------------------------------------------------------------
METRIC_HEADERS = {"loss": "held-out loss (nats per token)", "perplexity": "held-out perplexity (e^loss)"}


def paper_row(m):
    """The paper's row (``PAPER_TABLE``) for one of our methods as text: the same method at the same
    depth ratio N / M (the Universal Transformer: the paper's one wide layer, whatever N)."""
    try:
        key = ("Universal", None) if m["method"] == "Universal" else (m["method"], m["N"] // m["M"])
    except (KeyError, TypeError, ZeroDivisionError):
        return None
    if key not in PAPER_TABLE:
        return None
    mn, bleu, speed = PAPER_TABLE[key]
    return f"M/N = {mn}: {'63M' if key[0] == 'Universal' else '61M'}, speed {speed:.2f}, BLEU {bleu:.2f}"


def book_table(experiment, result, settings, metric="loss", paper=True):
    """One row per method and LN position: the paper's row, parameters, speed, the held-out metric,
    for the seq2seq task the seeds that solved it, and the same method trained at equal
    multiply-accumulates and at equal measured time."""
    rows = []
    for norm, methods in (result.get("settings") or {}).items():
        for key, m in (methods.items() if isinstance(methods, dict) else ()):
            if not isinstance(m, dict):
                continue
            p = paper_row(m) if paper else None
            row = [f"{m.get('label', key)}, {norm}-LN", p or "–",
                   cells.cell(lambda m=m: cells.num(cells.get(m, "params"))),
                   cells.cell(lambda m=m: f"{cells.get(m, 'speed'):.2f}"),
                   cells.cell(lambda m=m: cells.num(cells.get(m, metric)))]
            if metric == "loss":
                row.append(cells.cell(lambda m=m: solved(cells.get(m, "exact_match"))))
            for at in BUDGETS:
                row.append(cells.cell(lambda m=m, at=at: f"{cells.num(cells.get(m, at, metric))} "
                                                         f"({cells.get(m, at, 'steps')} updates)"))
            rows.append(row)
    if not rows:
        return (f"*This run's `{experiment}` result has no per-method table the book can read.*\n\n"
                + cells.source_line(experiment, settings) + "\n")
    header = ["configuration", "the paper reports (WMT En-De)" if paper else "the paper reports",
              "parameters", "speed vs Vanilla", METRIC_HEADERS[metric]]
    if metric == "loss":
        header.append(f"seeds solved (exact match ≥ {SOLVED:.0%})")
    header += [f"{METRIC_HEADERS[metric]} at {BUDGETS[at][0]}" for at in BUDGETS]
    note = (" The paper's row is the same method at the same depth ratio N / M, from Takase & Kiyono's "
            "arXiv version (2104.06022, 2021), Table 1: its speed is training speed relative to Vanilla "
            "and its BLEU the average over newstest2010-2016." if paper else
            " Takase & Kiyono's language-modelling runs (WikiText-103) are far larger than this one; their "
            "numbers are not set beside these.")
    note += (" The last two columns are the method trained on its own full schedule for as many updates as "
             "cost what Vanilla's do: counted multiply-accumulates per token, then measured seconds per "
             "training step; not a reading in the middle of a longer run.")
    return cells.markdown_table(header, rows) + "\n\n" + cells.source_line(experiment, settings) + note + "\n"

