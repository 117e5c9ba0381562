"""Experiment "takase": Takase & Kiyono's (2021, arXiv 2104.06022) comparisons on a toy
sequence-to-sequence task, over several seeds, with Post-LN (their main setting) and Pre-LN.

* Equal parameters (their Table 1, upper half): Vanilla (M = N = n), Universal (M = 1 at N = n
  positions, one layer made *wider*, hidden size and FFN together, until its parameters match
  Vanilla's, as their 63M Universal against 61M Vanilla), and Sequence, Cycle and Cycle (rev) with
  M = n distinct layers at N = 2n positions: the same parameters, twice the depth.
* Efficiency (their Table 1, lower half): the strategies at M = n, N = 3n against
  Universal, which the paper finds about as fast (speed 0.47 against 0.48 for M = 6, N = 18), at
  an equal number of updates.
* Equal training time, read from the curves: each method's step time is measured back to back in
  ``run`` (never while the parallel training phase shares the CPU); Vanilla's S steps take
  S · t_Vanilla seconds, and a method with step time t has done S · t_Vanilla / t steps by then.
  Its held-out loss is read at the last evaluation within that many steps. Its learning rate has
  not decayed there yet (each run's schedule spans S steps), which favours the faster models.

Every table, title and legend states M, N and the LayerNorm position.
"""
from minishare import optim
from minishare.analysis import count_parameters, memory, training_figures
from minishare.analysis.figure_style import save_figure
from minishare.experiments import stats
from minishare.experiments.common import build_model, make_config, make_task
from minishare.experiments.runs import cached_run
from minishare.models import DecoderLM
from minishare.nn import init
from minishare.train import parameter_groups

STRATEGIES = (("Sequence", "sequence"), ("Cycle", "cycle"), ("Cycle (rev)", "cycle-rev"))
LN = {"post": "Post-LN", "pre": "Pre-LN"}
# what a history keeps in result.json: the training loss for the curves, the held-out metrics
KEEP = ("step", "loss", "eval_loss", "eval_exact_match", "eval_perplexity")


# --- the widened Universal model -------------------------------------------------------------------
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


# --- the configurations ------------------------------------------------------------------------------
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


def _slug(key, M, N):
    return f"{key.rsplit('-n', 1)[0]}-m{M}-n{N}"


def _plan(settings):
    """{LN position: variants} as this experiment trains them, the efficiency runs (N = 3n) included."""
    V = make_task(settings.takase_task, 0, 1, 1)[1]
    return {norm: variants(settings.takase_task, V, settings.takase_model, settings.takase_layers, norm,
                           efficiency=True)
            for norm in settings.takase_norms}


def _request(settings, variant, seed):
    steps = settings.takase_steps
    return dict(task=settings.takase_task, overrides=variant["overrides"], steps=steps,
                batch_size=settings.takase_batch_size, lr=settings.takase_lr,
                eval_every=max(steps // settings.takase_evals, 1), seed=seed)


def _name(norm, key, v, seed):
    return f"takase-{norm}ln-{_slug(key, v['M'], v['N'])}-s{seed}"


def requests(settings):
    """Every training run, one per (LN position, method, seed)."""
    return {_name(norm, key, v, seed): _request(settings, v, seed)
            for norm, vs in _plan(settings).items() for key, v in vs.items() for seed in settings.seeds}


# --- speed, measured back to back ---------------------------------------------------------------------
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


# --- the experiment ----------------------------------------------------------------------------------
def _thin(history):
    return [{k: row[k] for k in KEEP if k in row} for row in history]


def _at_step(history, step, key):
    """The held-out ``key`` at the last evaluation no later than ``step`` (None if none yet)."""
    rows = [row for row in history if key in row and row["step"] <= step]
    return rows[-1][key] if rows else None


def summarize(out, name_of, vs, seeds, request_of, timing, progress, metrics):
    """Load (or train) every run of ``vs`` and gather, per method: parameters, step time, relative
    speed, thinned histories per seed, and the spread of each final held-out metric and of the
    held-out loss at Vanilla's training time."""
    result = {}
    for key, v in vs.items():
        runs = [cached_run(out, name_of(key, v, seed), progress, **request_of(v, seed)) for seed in seeds]
        histories = [_thin(r["history"]) for r in runs]
        steps = int(histories[0][-1]["step"])
        reach = int(steps * timing["vanilla"] / timing[key])        # steps done in Vanilla's time
        at_time = [_at_step(h, reach, "eval_loss") for h in histories]
        result[key] = {**{k: v[k] for k in ("method", "label", "M", "N", "H")},
                       "params": count_parameters(runs[0]["model"]), "steps": steps,
                       "step_time": timing[key], "speed": timing["vanilla"] / timing[key],
                       "steps_in_vanilla_time": reach, "histories": histories,
                       **{m: stats.spread([r["final"][f"eval_{m}"] for r in runs]) for m in metrics},
                       "loss_at_vanilla_time": stats.spread(at_time) if None not in at_time else None}
    return result


def run(out, settings, progress=True):
    plan = _plan(settings)
    result = {"task": settings.takase_task, "steps": settings.takase_steps, "seeds": list(settings.seeds),
              "n": settings.takase_layers, "settings": {}}
    for norm, vs in plan.items():
        timing = step_times(settings.takase_task, {k: v["overrides"] for k, v in vs.items()},
                            settings.takase_batch_size, settings.timing_repeats)
        result["settings"][norm] = summarize(
            out, lambda key, v, seed: _name(norm, key, v, seed), vs,
            settings.seeds, lambda v, seed: _request(settings, v, seed), timing, progress,
            metrics=("loss", "exact_match"))
    return result


# --- figures, tables, observations -------------------------------------------------------------------
TIME_AXIS = "training time at the measured step time (s)"


def _timed(histories, step_time):
    """The histories with the time each step takes at the back-to-back measured step time."""
    return [[{**row, TIME_AXIS: row["step"] * step_time} for row in h] for h in histories]


def convergence_figures(result, folder, prefix, groups, title, perplexity=False):
    """One figure per (LN position, group): ``groups`` maps a file suffix to (caption, keys, x).
    The LN position is in the title, so the legend names each method once. ``perplexity``: a
    second axis reads the loss as perplexity (``training_figures.plot_convergence``)."""
    figs = []
    for norm, methods in result["settings"].items():
        for suffix, (caption, keys, x) in groups.items():
            keys = keys(methods)
            if len(keys) < 2:
                continue
            histories = {methods[k]["label"]: (_timed(methods[k]["histories"], methods[k]["step_time"])
                                               if x == TIME_AXIS else methods[k]["histories"])
                         for k in keys}
            n_seeds = len(result["seeds"])
            fig = training_figures.plot_convergence(histories, x=x, y="loss", eval_y="eval_loss",
                                                    title=f"{title}, {LN[norm]}:\n{caption}",
                                                    perplexity=perplexity)
            figs.append((f"{title}: {caption} ({LN[norm]}, {n_seeds} seeds, mean with a min–max band)",
                         save_figure(fig, f"{folder}/{prefix}_{suffix}_{norm}ln")))
    return figs


def _equal(methods):
    return [k for k, r in methods.items() if k in ("vanilla", "universal") or r["N"] == 2 * methods["vanilla"]["N"]]


def _efficiency(methods):
    deep = [k for k, r in methods.items() if r["N"] == 3 * methods["vanilla"]["N"]]
    return ["vanilla", "universal"] + deep if deep else []


def figures(result, folder):
    task, n = result["task"], result["n"]
    return convergence_figures(result, folder, "takase", {
        "equal_params": ("equal parameters", _equal, "step"),
        "efficiency": (f"strategies at M = {n}, N = {3 * n} against Universal (M = 1, N = {n}), equal updates",
                       _efficiency, "step"),
        "equal_time": ("equal parameters against training time", _equal, TIME_AXIS),
    }, f"Takase & Kiyono on '{task}'")


def _fmt(s):
    return "n/a" if s is None else stats.fmt(s)


def report(result, figs):
    n, S = result["n"], result["steps"]
    lines = [f"Task '{result['task']}', {S} updates, seeds {result['seeds']}. Vanilla has M = N = {n}; "
             f"Universal is one layer (M = 1) used at N = {n} positions, widened (hidden size H with the FFN "
             f"at 4 H) until its parameters are closest to Vanilla's; the strategies use M = {n} layers at "
             f"N = {2 * n} positions (equal parameters) and N = {3 * n} "
             f"(Takase & Kiyono's efficiency comparison). Speed: Vanilla's step time over the method's, "
             f"measured back to back after training. 'Loss at Vanilla's time': the held-out loss at the "
             f"last evaluation within the steps the method makes in the time Vanilla takes for {S} "
             f"(read from the curves; its learning rate has not decayed there, which favours faster "
             f"methods). Values: mean ± std (min–max) over seeds.", ""]
    for norm, methods in result["settings"].items():
        lines += [f"**{LN[norm]}**", "",
                  "| method | M | N | H | LN | parameters | speed | held-out loss | exact match | "
                  "steps in Vanilla's time | loss at Vanilla's time |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in methods.values():
            lines.append(f"| {r['method']} | {r['M']} | {r['N']} | {r['H']} | {LN[norm]} | "
                         f"{r['params']:,} | {r['speed']:.2f} | {_fmt(r['loss'])} | {_fmt(r['exact_match'])} | "
                         f"{r['steps_in_vanilla_time']} | {_fmt(r['loss_at_vanilla_time'])} |")
        lines.append("")
    return "\n".join(lines)


def compare(a, b, metric="loss"):
    """'lower' or 'higher' when a's seeds all lie below or above b's (stats.separated), else None."""
    x, y = a[metric], b[metric]
    if x is None or y is None or not stats.separated(x["values"], y["values"]):
        return None
    return "lower" if x["mean"] < y["mean"] else "higher"


def _verdicts(methods, keys, reference, metric="loss", digits=3):
    ref = methods[reference]
    parts = []
    for k in keys:
        r = methods[k]
        verdict = compare(r, ref, metric)
        what = {None: "the run cannot tell (seed ranges overlap)", "lower": "lower, separated",
                "higher": "higher, separated"}[verdict]
        parts.append(f"{r['label']} {stats.fmt(r[metric], digits)}: {what}")
    return parts


def observations(result):
    notes = []
    for norm, methods in result["settings"].items():
        n = methods["vanilla"]["N"]
        strategies = [k for k in _equal(methods) if k not in ("vanilla", "universal")]
        notes.append(f"{LN[norm]}, equal parameters, held-out loss against Vanilla (M={n}, N={n}) "
                     f"{_fmt(methods['vanilla']['loss'])}: "
                     + "; ".join(_verdicts(methods, ["universal"] + strategies, "vanilla")) + ".")
        at_time = {k: methods[k] for k in _equal(methods) if methods[k]["loss_at_vanilla_time"] is not None}
        if len(at_time) > 1:
            timed = {k: {**r, "loss": r["loss_at_vanilla_time"]} for k, r in at_time.items()}
            notes.append(f"{LN[norm]}, equal training time (Vanilla's {result['steps']} steps), held-out loss "
                         f"against Vanilla: " + "; ".join(_verdicts(timed, [k for k in timed if k != "vanilla"],
                                                                    "vanilla")) + ".")
        efficiency = [k for k in _efficiency(methods) if k not in ("vanilla", "universal")]
        if efficiency:
            uni = methods["universal"]
            verdicts = [compare(methods[k], uni) for k in efficiency]
            if all(v == "lower" for v in verdicts):
                headline = "every strategy beats Universal, as in the paper (seed ranges separated)"
            elif any(v == "higher" for v in verdicts):
                headline = "not every strategy beats Universal: at least one is worse (seed ranges separated)"
            else:
                headline = "the run cannot tell whether every strategy beats Universal (seed ranges overlap for some)"
            speeds = ", ".join(f"{methods[k]['method']} (M={methods[k]['M']}, N={methods[k]['N']}) "
                               f"{methods[k]['speed']:.2f}" for k in ["universal"] + efficiency)
            notes.append(f"{LN[norm]}, efficiency at equal updates: {headline}. Held-out loss against "
                         f"{uni['label']} {_fmt(uni['loss'])}: "
                         + "; ".join(_verdicts(methods, efficiency, "universal")) + f". Speeds relative to "
                         f"Vanilla, measured back to back: {speeds} (the paper: Universal 0.48, M=6, N=18 0.47).")
    return notes
