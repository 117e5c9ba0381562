"""Experiment "takase": Takase & Kiyono's (2021, arXiv 2104.06022) comparisons on a toy
sequence-to-sequence task, over several seeds, with Post-LN (their main setting) and Pre-LN.

* Equal parameters (their Table 1, upper half): Vanilla (M = N = n), Universal (M = 1 at N = n
  positions, one layer made *wider*, hidden size and FFN together, until its parameters match
  Vanilla's, as their 63M Universal against 61M Vanilla), and Sequence, Cycle and Cycle (rev) with
  M = n distinct layers at N = 2n positions: the same parameters, twice the depth.
* Efficiency (their Table 1, lower half): the strategies at M = n, N = 3n against
  Universal, which the paper finds about as fast (speed 0.47 against 0.48 for M = 6, N = 18), at
  an equal number of updates.
* Equal compute: the methods of the equal-parameter comparison trained again, each on its own full
  schedule (warm-up and decay over its own steps), for as many updates as cost what Vanilla's S
  updates cost: S_k = S · C_Vanilla / C_k, with C the multiply-accumulates of a step's matrix
  products (``macs_per_token``). Counted, not timed: the budget names the runs ``requests`` asks
  for before anything trains, and a timing changes with the machine. (Reading a deeper method's
  S-step curve at Vanilla's time instead would read it before its learning rate decayed.)

Each comparison of two methods is a claim (``claims``: paired over seeds, Holm's correction over
the primary ones). A run on "reverse" either stays on a plateau or leaves it, so the report also
counts the seeds that solved the task (``SOLVED``), and prints the no-model rules of the task
(``trivial_rules``) beside the models. Every table, title and legend states M, N and the LayerNorm
position.
"""
import math

from minishare import optim
from minishare.analysis import count_parameters, memory, training_figures
from minishare.analysis.figure_style import save_figure
from minishare.data import seq2seq
from minishare.experiments import claims as ledger, stats
from minishare.run.build import build_model, make_config, make_task
from minishare.experiments import runs
from minishare.experiments.runs import cached_run
from minishare.models import DecoderLM
from minishare.nn import init
from minishare.train import parameter_groups

STRATEGIES = (("Sequence", "sequence"), ("Cycle", "cycle"), ("Cycle (rev)", "cycle-rev"))
LN = {"post": "Post-LN", "pre": "Pre-LN"}
# what a history keeps in result.json: the training loss for the curves, the held-out metrics
KEEP = ("step", "loss", "eval_loss", "eval_exact_match", "eval_perplexity")
# Held-out exact match at which a run counts as having solved the task. On "reverse" a run ends
# either near 0 (the plateau: the right length, the wrong letters) or near 1; 0.9 lies in that gap,
# and a run caught while leaving the plateau (exact match 0.5) does not count.
SOLVED = 0.9
# The seed of the learning-rate search (``tuning_requests``): none of the comparisons' seeds
TUNING_SEED = 100
# ``requests`` comes in stages: the comparison's runs are known once the search has run
STAGED = True
PAPER = "Takase & Kiyono (arXiv 2104.06022, 2021), Table 1, WMT En-De, BLEU (higher is better)"
# (method, N / M) -> (M/N, BLEU, speed relative to Vanilla) in that table; Universal is M = 1, N = 6
PAPER_TABLE = {("Vanilla", 1): ("6/6", 26.57, 1.00), ("Universal", None): ("1/6", 26.90, 0.48),
               ("Sequence", 2): ("6/12", 27.13, 0.63), ("Cycle", 2): ("6/12", 27.04, 0.63),
               ("Cycle (rev)", 2): ("6/12", 27.08, 0.63), ("Sequence", 3): ("6/18", 27.02, 0.47),
               ("Cycle", 3): ("6/18", 27.25, 0.47), ("Cycle (rev)", 3): ("6/18", 27.31, 0.47)}


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


def equal_keys(methods):
    """The keys of the equal-parameter comparison: Vanilla, Universal and the strategies at N = 2n."""
    return [k for k, r in methods.items() if k in ("vanilla", "universal") or r["N"] == 2 * methods["vanilla"]["N"]]


def efficiency_keys(methods):
    deep = [k for k, r in methods.items() if r["N"] == 3 * methods["vanilla"]["N"]]
    return ["vanilla", "universal"] + deep if deep else []


# --- equal compute, counted --------------------------------------------------------------------------
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


# --- the runs ------------------------------------------------------------------------------------------
def slug(key, M, N):
    return f"{key.rsplit('-n', 1)[0]}-m{M}-n{N}"


def plan(settings):
    """{LN position: (variants, equal-compute updates)} as this experiment trains them, the
    efficiency runs (N = 3n) included. The length the budget counts attention at is the mean
    target length (with its end token) of seed 0's held-out examples."""
    t, V = make_task(settings.takase_task, 0, 1, 1)
    T = sum(len(target) + 1 for _, target in t.eval_pairs) / len(t.eval_pairs)
    out = {}
    for norm in settings.takase_norms:
        vs = variants(settings.takase_task, V, settings.takase_model, settings.takase_layers, norm, efficiency=True)
        out[norm] = vs, equal_compute_steps(settings.takase_task, V, vs, settings.takase_steps, T)
    return out


def _request(settings, variant, seed, lr, steps=None):
    steps = steps or settings.takase_steps
    return dict(task=settings.takase_task, overrides=variant["overrides"], steps=steps,
                batch_size=settings.takase_batch_size, lr=lr,
                eval_every=max(steps // settings.takase_evals, 1), seed=seed)


# --- the learning rate of each method, chosen on a seed the comparisons do not use -----------------------
def tuning_name(norm, key, v, lr):
    return f"takase-tune-{norm}ln-{slug(key, v['M'], v['N'])}-lr{lr:g}-s{TUNING_SEED}"


def tuning_requests(settings):
    """One run of S updates per (LN position, method, learning rate of ``takase_lrs``), all with
    seed ``TUNING_SEED``: the search that picks each method's learning rate (``tuned_lrs``)."""
    return {tuning_name(norm, key, v, lr): _request(settings, v, TUNING_SEED, lr)
            for norm, (vs, _) in plan(settings).items() for key, v in vs.items() for lr in settings.takase_lrs}


def tuned_lrs(out, settings):
    """{LN position: {method: {"lr": the chosen rate, "losses": {rate: final held-out loss}}}}, from
    the tuning runs in ``out`` (trained here when missing): each method gets the rate of its lowest
    held-out loss at ``TUNING_SEED``, so no seed of the comparison chose it."""
    chosen = {}
    for norm, (vs, _) in plan(settings).items():
        for key, v in vs.items():
            losses = {lr: cached_run(out, tuning_name(norm, key, v, lr), False,
                                     **_request(settings, v, TUNING_SEED, lr))["final"]["eval_loss"]
                      for lr in settings.takase_lrs}
            chosen.setdefault(norm, {})[key] = {"lr": min(losses, key=losses.get),
                                                 "losses": {f"{lr:g}": x for lr, x in losses.items()}}
    return chosen


def tuning_done(out, settings):
    return out is not None and all(runs.is_cached(out, name, request)
                                   for name, request in tuning_requests(settings).items())


def run_name(norm, key, v, seed, steps=None):
    """A run's name; ``steps``: the updates of an equal-compute run (the others make S)."""
    return f"takase-{norm}ln-{slug(key, v['M'], v['N'])}{'' if steps is None else f'-{steps}steps'}-s{seed}"


def extra_runs(budget, steps):
    """The equal-compute updates that need runs of their own: {key: S_k} where S_k differs from S
    (Vanilla's equal-compute runs are its S-update runs)."""
    return {k: s for k, s in budget.items() if s != steps}


def method_requests(vs, budget, steps, seeds, name_of, request_of):
    """{run name: request}: one run per (method, seed) of S = ``steps`` updates, and one per
    (method, seed) whose equal-compute budget differs from S. ``name_of(key, v, seed, steps=None)``
    and ``request_of(key, v, seed, steps=None)`` make the name and the run_training arguments."""
    extra = extra_runs(budget, steps)
    out = {}
    for key, v in vs.items():
        for seed in seeds:
            out[name_of(key, v, seed)] = request_of(key, v, seed)
            if key in extra:
                out[name_of(key, v, seed, extra[key])] = request_of(key, v, seed, extra[key])
    return out


def requests(settings, out=None):
    """Every training run, in two stages. First the tuning runs (``tuning_requests``); once they
    are in ``out``, also the comparison's: one per (LN position, method, seed), and one per (LN
    position, equal-parameter method other than Vanilla, seed) for its equal-compute budget, each
    at its method's tuned learning rate."""
    wanted = tuning_requests(settings)
    if tuning_done(out, settings):
        wanted.update(comparison_requests(settings, tuned_lrs(out, settings)))
    return wanted


def comparison_requests(settings, lrs):
    """The comparison's runs, each method at its learning rate ``lrs[norm][key]["lr"]``."""
    wanted = {}
    for norm, (vs, budget) in plan(settings).items():
        wanted.update(method_requests(
            vs, budget, settings.takase_steps, settings.seeds,
            lambda key, v, seed, steps=None, norm=norm: run_name(norm, key, v, seed, steps),
            lambda key, v, seed, steps=None, norm=norm: _request(settings, v, seed, lrs[norm][key]["lr"], steps)))
    return wanted


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


def _finals(runs, metrics):
    return {m: stats.spread([r["final"][f"eval_{m}"] for r in runs]) for m in metrics}


def summarize(out, name_of, vs, seeds, request_of, timing, progress, metrics, budget):
    """Load (or train) every run of ``vs`` and gather, per method: parameters, step time, relative
    speed, thinned histories per seed and the spread of each final held-out metric; for the
    methods of ``budget`` ({key: equal-compute updates}) the same of their equal-compute runs
    under "equal_compute". ``name_of(key, v, seed, steps=None)`` and ``request_of(key, v, seed,
    steps=None)`` name and describe a run (``steps``: an equal-compute run's updates)."""
    result = {}
    for key, v in vs.items():
        runs = [cached_run(out, name_of(key, v, seed), progress, **request_of(key, v, seed)) for seed in seeds]
        histories = [_thin(r["history"]) for r in runs]
        steps = int(histories[0][-1]["step"])
        result[key] = {**{k: v[k] for k in ("method", "label", "M", "N", "H")},
                       "params": count_parameters(runs[0]["model"]), "steps": steps,
                       "step_time": timing[key], "speed": timing["vanilla"] / timing[key],
                       "histories": histories, **_finals(runs, metrics)}
        if key in budget:
            own = extra_runs(budget, steps).get(key)
            if own is not None:
                runs = [cached_run(out, name_of(key, v, seed, own), progress, **request_of(key, v, seed, own))
                        for seed in seeds]
            result[key]["equal_compute"] = {"steps": budget[key], "histories": [_thin(r["history"]) for r in runs],
                                            **_finals(runs, metrics)}
    return result


def run(out, settings, progress=True):
    lrs = tuned_lrs(out, settings)
    result = {"task": settings.takase_task, "steps": settings.takase_steps, "seeds": list(settings.seeds),
              "n": settings.takase_layers, "lrs": list(settings.takase_lrs), "tuning_seed": TUNING_SEED,
              "settings": {}}
    for norm, (vs, budget) in plan(settings).items():
        timing = step_times(settings.takase_task, {k: v["overrides"] for k, v in vs.items()},
                            settings.takase_batch_size, settings.timing_repeats)
        result["settings"][norm] = summarize(
            out, lambda key, v, seed, steps=None: run_name(norm, key, v, seed, steps), vs, settings.seeds,
            lambda key, v, seed, steps=None: _request(settings, v, seed, lrs[norm][key]["lr"], steps),
            timing, progress, metrics=("loss", "exact_match"), budget=budget)
        for key, tuning in lrs[norm].items():
            result["settings"][norm][key]["tuning"] = tuning
    return result


# --- no-model rules ----------------------------------------------------------------------------------
def rule_scores(pairs, n_symbols):
    """(exact match of copying the source, held-out loss of uniform letters at the source's
    length) on (source ids, target ids) ``pairs``: see ``trivial_rules``."""
    copied = sum(list(source) == list(target) for source, target in pairs) / len(pairs)
    letters = sum(len(target) for _, target in pairs)
    return copied, letters * math.log(n_symbols) / (letters + len(pairs))


def trivial_rules(task_name, seeds):
    """The no-model rules of a task, scored on the held-out examples of every seed
    (``tasks.Seq2SeqTask`` draws them with seed 10,000 + s), as [(name, metric, mean over seeds)].
    A task with ``baselines`` (addition, pointer) scores its own rules' exact match; a task of the
    copy family (copy, reverse, sort: the target holds the source's letters) has these:

    * copy the source: its exact match (on "reverse" the palindromes, every one-letter source
      among them); left out on "copy", where it is the task;
    * uniform letters at the source's length: the held-out loss (mean cross-entropy over the
      target's letters and its end token) of a rule that reads the target's length off the
      source, so the end token costs nothing, and knows nothing of the letters: ln(alphabet) per
      letter. It is the plateau of a model that has learnt the length alone.

    Other tasks have no such rule here: []."""
    task = seq2seq.get_task(task_name)
    if hasattr(task, "baselines"):
        per_seed = [task.baselines(_symbols(task, make_task(task_name, seed, 1, 1)[0].eval_pairs)) for seed in seeds]
        return [(rule, "exact_match", sum(s[rule] for s in per_seed) / len(seeds)) for rule in per_seed[0]]
    if not isinstance(task, seq2seq.CopyTask):
        return []
    scores = [rule_scores(make_task(task_name, seed, 1, 1)[0].eval_pairs, task.n_symbols) for seed in seeds]
    rules = [("uniform letters at the source's length", "loss", sum(s[1] for s in scores) / len(seeds))]
    if task.name != "copy":
        rules.insert(0, ("copy the source", "exact_match", sum(s[0] for s in scores) / len(seeds)))
    return rules


def _symbols(task, pairs):
    """(source, target) id pairs as symbols, as a task's ``baselines`` reads them."""
    return [([task.vocab[i] for i in source], [task.vocab[i] for i in target]) for source, target in pairs]


def baselines(result, settings):
    return [ledger.baseline("takase", metric, name, value)
            for name, metric, value in trivial_rules(settings.takase_task, settings.seeds)]


# --- figures, tables, observations -------------------------------------------------------------------
COMPUTE_AXIS = "compute, in Vanilla's updates"


def arm_name(r, norm):
    """A method as a claim names it: its label with the LN position."""
    return f"{r['label']}, {LN[norm]}"


def by_step(methods, key):
    return methods[key]["histories"]


def by_compute(methods, key):
    """An equal-compute run's histories against compute in Vanilla's updates (step × S / S_k), so
    every method's curve ends at S."""
    c = methods[key]["equal_compute"]
    scale = methods["vanilla"]["steps"] / c["steps"]
    return [[{**row, COMPUTE_AXIS: row["step"] * scale} for row in h] for h in c["histories"]]


def equal_compute_keys(methods):
    return [k for k in equal_keys(methods) if "equal_compute" in methods[k]]


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


EQUAL_COMPUTE_CAPTION = "equal parameters at equal compute, each method on its own schedule"


def figures(result, folder):
    task, n = result["task"], result["n"]
    return convergence_figures(result, folder, "takase", {
        "equal_params": ("equal parameters", equal_keys, "step", by_step),
        "efficiency": (f"strategies at M = {n}, N = {3 * n} against Universal (M = 1, N = {n}), equal updates",
                       efficiency_keys, "step", by_step),
        "equal_compute": (EQUAL_COMPUTE_CAPTION, equal_compute_keys, COMPUTE_AXIS, by_compute),
    }, f"Takase & Kiyono on '{task}'")


def solved(s):
    """"k of n": the seeds whose held-out exact match (a spread) reaches ``SOLVED``."""
    return f"{sum(v >= SOLVED for v in s['values'])} of {s['n']}"


def report(result, figs):
    n, S = result["n"], result["steps"]
    rules = trivial_rules(result["task"], result["seeds"])
    lines = [f"Task '{result['task']}', {S} updates, seeds {result['seeds']}. Vanilla has M = N = {n}; "
             f"Universal is one layer (M = 1) used at N = {n} positions, widened (hidden size H with the FFN "
             f"at 4 H) until its parameters are closest to Vanilla's; the strategies use M = {n} layers at "
             f"N = {2 * n} positions (equal parameters) and N = {3 * n} "
             f"(Takase & Kiyono's efficiency comparison). Speed: Vanilla's step time over the method's, "
             f"measured back to back after training. Solved: the seeds whose held-out exact match is at "
             f"least {SOLVED} (where runs either stay on a plateau or leave it, a mean hides how many "
             f"did). No model: rules that need no training, on the same held-out examples (mean over "
             f"seeds). Values: mean ± std (min–max) over seeds.", ""]
    if "lrs" in result:
        lines += [f"Learning rates: each method's, picked from {{{', '.join(f'{lr:g}' for lr in result['lrs'])}}} "
                  f"by its held-out loss after {S} updates with seed {result['tuning_seed']}, which no "
                  "comparison uses: " + "; ".join(
                      f"{LN[norm]} " + ", ".join(f"{r['label']} {r['tuning']['lr']:g}" for r in methods.values())
                      for norm, methods in result["settings"].items()) + ".", ""]
    for norm, methods in result["settings"].items():
        lines += [f"**{LN[norm]}**", "",
                  "| method | M | N | H | LN | parameters | speed | held-out loss | exact match | "
                  f"solved (exact match ≥ {SOLVED}) |", "|---|---|---|---|---|---|---|---|---|---|"]
        for r in methods.values():
            lines.append(f"| {r['method']} | {r['M']} | {r['N']} | {r['H']} | {LN[norm]} | {r['params']:,} | "
                         f"{r['speed']:.2f} | {stats.fmt(r['loss'])} | {stats.fmt(r['exact_match'])} | "
                         f"{solved(r['exact_match'])} |")
        for name, metric, value in rules:
            cells = {"loss": "–", "exact_match": "–", metric: f"{value:.3f}"}
            lines.append(f"| no model: {name} | – | – | – | – | – | – | {cells['loss']} | "
                         f"{cells['exact_match']} | – |")
        lines.append("")
    lines += equal_compute_tables(result, [("held-out loss", "loss", 3), ("exact match", "exact_match", 3)])
    return "\n".join(lines)


def equal_compute_tables(result, columns):
    """The equal-compute table of each LN position: each method's updates S_k and its final
    held-out metrics, ``columns`` as (header, metric, digits) (exact match adds its solved count);
    one sentence where the result has no equal-compute runs (the settings left them out)."""
    if not any(equal_compute_keys(methods) for methods in result["settings"].values()):
        return ["Equal compute: not in this run (its settings leave the equal-compute runs out; the "
                "long tier trains them)."]
    S = result["steps"]
    counted = any(metric == "exact_match" for _, metric, _ in columns)
    header = ["method", "M", "N", "H", "LN", "updates"] + [h for h, _, _ in columns] + \
        ([f"solved (exact match ≥ {SOLVED})"] if counted else [])
    lines = [f"Equal compute: each equal-parameter method trained again on its own schedule, for the "
             f"updates that cost what Vanilla's {S} cost (S_k = {S} · C_Vanilla / C_k, C the "
             f"multiply-accumulates of a step's matrix products, counted from the configuration).", ""]
    for norm, methods in result["settings"].items():
        lines += [f"**{LN[norm]}, equal compute**", "", "| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
        for k in equal_compute_keys(methods):
            r, c = methods[k], methods[k]["equal_compute"]
            cells = [r["method"], r["M"], r["N"], r["H"], LN[norm], c["steps"]] + \
                [stats.fmt(c[metric], digits) for _, metric, digits in columns] + \
                ([solved(c["exact_match"])] if counted else [])
            lines.append("| " + " | ".join(map(str, cells)) + " |")
        lines.append("")
    return lines


def observations(result):
    """Facts of each method alone: how many seeds solved the task, the measured speeds, the
    equal-compute budgets. Every comparison of two methods is a claim (``claims``)."""
    notes = []
    for norm, methods in result["settings"].items():
        notes.append(f"{LN[norm]}, seeds that solved '{result['task']}' (held-out exact match ≥ {SOLVED}): "
                     + "; ".join(f"{r['label']} {solved(r['exact_match'])}" for r in methods.values()) + ".")
        speeds = ", ".join(f"{r['method']} (M={r['M']}, N={r['N']}) {r['speed']:.2f}" for r in methods.values()
                           if r["method"] != "Vanilla")
        notes.append(f"{LN[norm]}, speed relative to Vanilla, measured back to back: {speeds} (the paper: "
                     "Universal 0.48, M=6, N=12 0.63, M=6, N=18 0.47).")
        budget = {k: methods[k]["equal_compute"]["steps"] for k in equal_compute_keys(methods)}
        if budget:
            notes.append(f"{LN[norm]}, equal compute: the updates that cost what Vanilla's {result['steps']} cost "
                         "(counted multiply-accumulates): "
                         + ", ".join(f"{methods[k]['label']} {s}" for k, s in budget.items() if k != "vanilla")
                         + ".")
    return notes


def _paper(a, b):
    """The paper's numbers for method a against method b, or None where it has no such row."""
    def row(r):
        return PAPER_TABLE.get(("Universal", None) if r["method"] == "Universal" else (r["method"], r["N"] // r["M"]))
    pa, pb = row(a), row(b)
    if pa is None or pb is None:
        return None
    return (f"{PAPER}: {a['method']} (M/N = {pa[0]}) {pa[1]:.2f} at speed {pa[2]:.2f} against "
            f"{b['method']} (M/N = {pb[0]}) {pb[1]:.2f} at speed {pb[2]:.2f}")


def method_claims(experiment, result, seeds, metric, what, digits=3, paper=True, better="lower"):
    """The comparisons of Takase & Kiyono's methods on held-out ``metric`` (``better``: "lower" or
    "higher"), per LN position: each strategy at N = 2n against Vanilla (equal parameters: primary), Universal
    against Vanilla, each strategy at N = 3n against Universal (efficiency: primary), and, where
    the result has them, each equal-compute run against Vanilla's."""
    out = []
    for norm, methods in result["settings"].items():
        def claim(a, b, kind, primary, at=None):
            x, y = (methods[k] if at is None else methods[k][at] for k in (a, b))
            return ledger.compare(
                f"{experiment}.{norm}ln.{a}_vs_{b}{'' if at is None else '.' + at}", experiment,
                f"{what}, {LN[norm]}, {kind}", metric, better, arm_name(methods[a], norm),
                arm_name(methods[b], norm), seeds, x[metric]["values"], y[metric]["values"],
                _paper(methods[a], methods[b]) if paper and at is None else None, primary, digits)
        deep = [k for k in equal_keys(methods) if k not in ("vanilla", "universal")]
        out += [claim(k, "vanilla", "equal parameters", True) for k in deep]
        out.append(claim("universal", "vanilla", "equal parameters", False))
        out += [claim(k, "universal", "efficiency at equal updates", True)
                for k in efficiency_keys(methods) if k not in ("vanilla", "universal")]
        out += [claim(k, "vanilla", "equal compute, each on its own schedule", False, "equal_compute")
                for k in equal_compute_keys(methods) if k != "vanilla"]
    return out


def claims(result, seeds):
    """On held-out exact match, the task's score (the paper's is BLEU): the no-model rules are
    scored on it too, so a method is compared only where it beats them."""
    return method_claims("takase", result, seeds, "exact_match", "Held-out exact match", better="higher")
