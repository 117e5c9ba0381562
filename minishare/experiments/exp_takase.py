"""Experiment "takase": Takase & Kiyono's (2021, arXiv 2104.06022) comparisons on a toy
sequence-to-sequence task, over several seeds, with Post-LN (their main setting) and Pre-LN.

* Equal parameters (their Table 1, upper half): Vanilla (M = N = n), Universal (M = 1 at N = n
  positions, one layer made *wider*, hidden size and FFN together, until its parameters match
  Vanilla's, as their 63M Universal against 61M Vanilla), and Sequence, Cycle and Cycle (rev) with
  M = n distinct layers at N = 2n positions: the same parameters, twice the depth.
* Equal multiply-accumulates: the methods of the equal-parameter comparison trained again, each on
  its own full schedule (warm-up and decay over its own steps), for as many updates as cost what
  Vanilla's S updates cost: S_k = S · C_Vanilla / C_k, with C the multiply-accumulates of a
  step's matrix products (``macs_per_token``), counted before anything trains. (Reading a deeper
  method's S-step curve at Vanilla's cost instead would read it before its learning rate decayed.)
* Equal measured time: the same, for S_k = S · t_Vanilla / t_k, with t the measured seconds of a
  training step, timed back to back before training (``takase_arms.kept_step_times``): the times
  of the speed column. Each strategy against Universal at equal
  measured time is the paper's efficiency question (their Table 1, lower half: the strategies at
  M = 6, N = 18 were about as fast as Universal, speed 0.47 against 0.48, at equal updates); here
  the strategies at N = 3n are far slower than Universal (0.40 against 0.84 of Vanilla's speed,
  measured), so equal updates would not be equal time, and the question is asked of the runs that
  had the same time. The strategies at N = 3n at equal updates (``takase_efficiency``) are in
  LONG.

Each comparison of two methods is a claim (``claims``: paired over seeds, Holm's correction over
the primary ones). A run on "reverse" either stays on a plateau or leaves it, so the report also
counts the seeds that solved the task (``SOLVED``), and prints the no-model rules of the task
(``trivial_rules``) beside the models. Every table, title and legend states M, N and the LayerNorm
position.
"""
import math

import numpy   # host-side counting of token ids

from minishare.data import seq2seq
from minishare.experiments import claims as ledger, runs, stats
from minishare.experiments.runs import cached_run
from minishare.experiments.takase_arms import (
    LN, SOLVED, book_table, budget_figures, by_step, convergence_figures, efficiency_keys,
    equal_compute_steps, budget_tables, equal_keys, equal_time_steps, method_claims, method_requests,
    budget_notes, kept_step_times, slug, solved, summarize, variants)
from minishare.run.build import make_task

NAME = "takase"
TITLE = "Takase & Kiyono: Sequence, Cycle, Cycle (rev)"
ORDER = 90
READS = ("takase_batch_size", "takase_efficiency", "takase_evals", "takase_layers", "takase_lrs", "takase_model",
         "takase_norms", "takase_steps", "takase_task", "timing_repeats")

# The seed of the learning-rate search (``tuning_requests``): none of the comparisons' seeds
TUNING_SEED = 100


# --- the runs ------------------------------------------------------------------------------------------


def plan(settings):
    """{LN position: (variants, {"equal_compute": updates})} as this experiment trains them, the
    efficiency runs (N = 3n) included where ``takase_efficiency`` asks for them. The length the
    budget counts attention at is the mean target length (with its end token) of seed 0's
    held-out examples. The equal-time budget is measured, not planned (``equal_time``)."""
    t, V = make_task(settings.takase_task, 0, 1, 1)
    T = sum(len(target) + 1 for _, target in t.eval_pairs) / len(t.eval_pairs)
    out = {}
    for norm in settings.takase_norms:
        vs = variants(settings.takase_task, V, settings.takase_model, settings.takase_layers, norm,
                      efficiency=settings.takase_efficiency)
        out[norm] = vs, {"equal_compute": equal_compute_steps(settings.takase_task, V, vs, settings.takase_steps, T)}
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
    held-out loss at ``TUNING_SEED``, so no seed of the comparison chose it. "edge" is true where
    that rate is the grid's smallest or largest: the best rate may lie beyond it, and the report
    says so (a grid of one rate chooses nothing and is no edge)."""
    chosen, grid = {}, sorted(settings.takase_lrs)
    for norm, (vs, _) in plan(settings).items():
        for key, v in vs.items():
            losses = {lr: cached_run(out, tuning_name(norm, key, v, lr), False,
                                     **_request(settings, v, TUNING_SEED, lr))["final"]["eval_loss"]
                      for lr in settings.takase_lrs}
            lr = min(losses, key=losses.get)
            chosen.setdefault(norm, {})[key] = {"lr": lr, "edge": len(grid) > 1 and lr in (grid[0], grid[-1]),
                                                 "losses": {f"{lr:g}": x for lr, x in losses.items()}}
    return chosen


def tuning_done(out, settings):
    return out is not None and all(runs.is_cached(out, name, request)
                                   for name, request in tuning_requests(settings).items())


def run_name(norm, key, v, seed, steps=None):
    """A run's name; ``steps``: the updates of a run at equal multiply-accumulates or at equal
    measured time (the others make S)."""
    return f"takase-{norm}ln-{slug(key, v['M'], v['N'])}{'' if steps is None else f'-{steps}steps'}-s{seed}"


def requests(settings, out=None):
    """Every training run, in two stages. First the tuning runs (``tuning_requests``); once they
    are in ``out``, the comparison's at each method's tuned learning rate: one per (LN position,
    method, seed) of S updates, and one per (LN position, equal-parameter method other than
    Vanilla, seed) at equal multiply-accumulates and at equal measured time (``timing``)."""
    wanted = tuning_requests(settings)
    if tuning_done(out, settings):
        wanted.update(comparison_requests(settings, tuned_lrs(out, settings), timing(out, settings)))
    return wanted


def later_requests(settings, out=None):
    """The comparison's runs while the search has not chosen its rates, as ``reproduce``'s
    estimate charges them before anything trains: each at the grid's first rate (a rate does not
    change a step's time), and each equal-time run as Vanilla's S updates, the time such a run is
    given by its definition. Empty once the search is done: ``requests`` then asks for the runs."""
    if tuning_done(out, settings):
        return {}
    wanted = {}
    for norm, (vs, budgets) in plan(settings).items():
        name_of, request_of = _names(settings, norm, {norm: {key: {"lr": settings.takase_lrs[0]} for key in vs}})
        wanted.update(method_requests(vs, budgets, settings.takase_steps, settings.seeds, name_of, request_of))
        for key in (k for k in equal_keys(vs) if k != "vanilla"):
            for seed in settings.seeds:
                wanted[f"{name_of(key, vs[key], seed)}-equal-time"] = request_of("vanilla", vs["vanilla"], seed)
    return wanted


def _names(settings, norm, lrs):
    """(name_of, request_of) of the runs of LN position ``norm`` at the tuned rates ``lrs``."""
    return (lambda key, v, seed, steps=None: run_name(norm, key, v, seed, steps),
            lambda key, v, seed, steps=None: _request(settings, v, seed, lrs[norm][key]["lr"], steps))


def timing(out, settings):
    """{LN position: {method: measured seconds of one training step}}, timed once and kept in
    ``out`` (``takase_arms.kept_step_times``)."""
    return {norm: kept_step_times(out, f"takase-{norm}ln", settings.takase_task,
                                  {k: v["overrides"] for k, v in vs.items()}, settings.takase_batch_size,
                                  settings.timing_repeats)
            for norm, (vs, _) in plan(settings).items()}


def budgets_of(settings, vs, budgets, times):
    """The budgets of ``plan`` with the equal-time one of the equal-parameter methods added."""
    return {**budgets, "equal_time": equal_time_steps(settings.takase_steps, {k: times[k] for k in equal_keys(vs)})}


def comparison_requests(settings, lrs, times):
    """The comparison's runs, each method at its learning rate ``lrs[norm][key]["lr"]``, the
    equal-time ones from ``times`` ({LN position: {key: measured seconds a step}})."""
    wanted = {}
    for norm, (vs, budgets) in plan(settings).items():
        wanted.update(method_requests(vs, budgets_of(settings, vs, budgets, times[norm]), settings.takase_steps,
                                      settings.seeds, *_names(settings, norm, lrs)))
    return wanted


# --- the experiment ----------------------------------------------------------------------------------


def run(out, settings, progress=True):
    lrs, times = tuned_lrs(out, settings), timing(out, settings)
    result = {"task": settings.takase_task, "steps": settings.takase_steps, "seeds": list(settings.seeds),
              "n": settings.takase_layers, "lrs": list(settings.takase_lrs), "tuning_seed": TUNING_SEED,
              "settings": {}}
    for norm, (vs, budgets) in plan(settings).items():
        name_of, request_of = _names(settings, norm, lrs)
        result["settings"][norm] = summarize(out, name_of, vs, settings.seeds, request_of, times[norm], progress,
                                             metrics=("loss", "exact_match"),
                                             budgets=budgets_of(settings, vs, budgets, times[norm]))
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


def target_frequency_loss(task_name, seed, batches=20):
    """Held-out loss of a rule that predicts every target token (the end token included) by its
    frequency in ``batches`` training batches of ``seed``, add-one over the vocabulary: what a
    model scores that learned which tokens targets hold and nothing of where they go."""
    task, V = make_task(task_name, seed, 64, 1)
    counts = numpy.ones(V)
    for i in range(batches):
        out = task.batch(i)["tgt_out"]
        counts += numpy.bincount(out[out != seq2seq.PAD_ID], minlength=V)
    held_out = seq2seq.collate(task.eval_pairs)["tgt_out"]
    return float(-numpy.log(counts / counts.sum())[held_out[held_out != seq2seq.PAD_ID]].mean())


def baselines(result, settings):
    loss = sum(target_frequency_loss(settings.takase_task, s) for s in settings.seeds) / len(settings.seeds)
    return [ledger.baseline("takase", metric, name, value)
            for name, metric, value in trivial_rules(settings.takase_task, settings.seeds)] + \
        [ledger.baseline("takase", "loss", "target-token frequencies", loss)]


# --- figures, tables, observations -------------------------------------------------------------------


def figures(result, folder):
    task, n = result["task"], result["n"]
    return convergence_figures(result, folder, "takase", {
        "equal_params": ("equal parameters", equal_keys, "step", by_step),
        "efficiency": (f"strategies at M = {n}, N = {3 * n} against Universal (M = 1, N = {n}), equal updates",
                       efficiency_keys, "step", by_step),
        **budget_figures(),
    }, f"Takase & Kiyono on '{task}'")


def report(result, figs):
    n, S = result["n"], result["steps"]
    rules = trivial_rules(result["task"], result["seeds"])
    lines = [f"Task '{result['task']}', {S} updates, seeds {result['seeds']}. Vanilla has M = N = {n}; "
             f"Universal is one layer (M = 1) used at N = {n} positions, widened (hidden size H with the FFN "
             f"at 4 H) until its parameters are closest to Vanilla's; the strategies use M = {n} layers at "
             f"N = {2 * n} positions (equal parameters)"
             + (f" and N = {3 * n} (Takase & Kiyono's efficiency comparison at equal updates)"
                if any(efficiency_keys(m) for m in result["settings"].values()) else "")
             + f". Speed: Vanilla's step time over the method's, measured back to back in one single-threaded "
             f"worker before training; the same times set the equal-time budgets. Solved: the seeds whose "
             f"held-out exact match is at least {SOLVED} (where runs either stay on a plateau or leave it, a mean hides how many "
             f"did). No model: rules that need no training, on the same held-out examples (mean over "
             f"seeds). Values: mean ± std (min–max) over seeds.", ""]
    if "lrs" in result:
        lines += [f"Learning rates: each method's, picked from {{{', '.join(f'{lr:g}' for lr in result['lrs'])}}} "
                  f"by its held-out loss after {S} updates with seed {result['tuning_seed']}, which no "
                  "comparison uses: " + "; ".join(
                      f"{LN[norm]} " + ", ".join(f"{r['label']} {r['tuning']['lr']:g}" for r in methods.values())
                      for norm, methods in result["settings"].items()) + ".", ""]
        edge = [f"{r['label']}, {LN[norm]}" for norm, methods in result["settings"].items()
                for r in methods.values() if r["tuning"].get("edge")]
        if edge:
            lines += ["**Warning: the rate chosen is at the edge of the grid for " + "; ".join(edge) + ". Its best "
                      "rate may lie beyond the grid: widen `takase_lrs` until the choice is interior.**", ""]
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
    lines += budget_tables(result, [("held-out loss", "loss", 3), ("exact match", "exact_match", 3)])
    return "\n".join(lines)


def observations(result):
    """Facts of each method alone: how many seeds solved the task, the measured speeds, the
    budgets of the equal-cost runs. Every comparison of two methods is a claim (``claims``)."""
    notes = []
    for norm, methods in result["settings"].items():
        notes.append(f"{LN[norm]}, seeds that solved '{result['task']}' (held-out exact match ≥ {SOLVED}): "
                     + "; ".join(f"{r['label']} {solved(r['exact_match'])}" for r in methods.values()) + ".")
        speeds = ", ".join(f"{r['method']} (M={r['M']}, N={r['N']}) {r['speed']:.2f}" for r in methods.values()
                           if r["method"] != "Vanilla")
        notes.append(f"{LN[norm]}, speed relative to Vanilla, measured back to back: {speeds} (the paper: "
                     "Universal 0.48, M=6, N=12 0.63, M=6, N=18 0.47).")
        notes += budget_notes(result, norm, methods)
    return notes


def claims(result, seeds):
    """Held-out loss is the primary metric: continuous, so five seeds can separate methods that
    differ by a fraction of a nat, where exact match (the task's score; the paper's is BLEU) is
    nearly all-or-nothing per seed and needs a difference of about half its range to show. Exact
    match is read beside it, secondary. Each metric has its no-model rules, so a method is compared
    only where it beats them."""
    return (method_claims("takase", result, seeds, "loss", "Held-out loss", better="lower", suffix=".loss")
            + method_claims("takase", result, seeds, "exact_match", "Held-out exact match", better="higher",
                            primary=False))


# --- the book's table ---------------------------------------------------------------------------------
BOOK_TABLES = ("takase",)


def book_tables(result, settings, said):
    """The chapter's table: every method beside the paper's row for it."""
    return {"takase": book_table(NAME, result, settings, "loss")}

