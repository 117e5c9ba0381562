"""Experiment "looped": can a shared block use more compute than it trained with? A looped model
(Yang et al., 2023; Geiping et al., 2025) is trained on pointer forests (``data.forest``) up to a
depth, with r drawn at random per batch and truncated backpropagation, then tested on deeper
forests at every r from 1 up: accuracy per node depth against test-time iterations.

Three arms, one per seed each, trained on the same batches from the same initialization stream:

- looped: a prelude layer, then one recurrent layer iterated r times, the prelude's output
  re-injected before each iteration (Yang et al.'s additive injection);
- not-shared, same parameters: the same two layers run once each (the looped model at r = 1,
  trained there): the same unique parameters, the compute of r = 1;
- not-shared, same compute: a prelude and r̄ distinct layers run once: the compute of the looped
  model at its training mean r̄, with r̄ times its recurrent parameters.

The claims compare accuracy on the nodes deeper than any in training, at a test-time r fixed
before the run: r = 2 r̄ ("thinking twice as long as on average in training").
"""
import numpy   # host-side scoring of predictions

from minishare import random as ms_random
from minishare.analysis import looped as costs, looped_figure
from minishare.analysis.figure_style import save_figure
from minishare.analysis.params import count_parameters
from minishare.data import PointerForest
from minishare.experiments import book_cells as cells, claims as ledger, stats
from minishare.models import LoopedConfig, LoopedForTokenClassification
from minishare.tasks import PointerForestTask
from minishare.train import TrainConfig, Trainer

NAME = "looped"
TITLE = "Looped depth: more iterations at test time on harder inputs"
ORDER = 160
READS = ("looped_batch_size", "looped_forest", "looped_iterations", "looped_lr", "looped_max_iterations",
         "looped_model", "looped_steps", "looped_test_depth", "looped_test_forests", "looped_train_depths")

TEST_SEED = 20_000         # the test forests: apart from the training batches and the task's own
ARMS = ("looped", "not-shared, same parameters", "not-shared, same compute")


def configs(settings):
    """{arm: LoopedConfig}; the fixed-depth arms are the same model class run once."""
    forest = dict(settings.looped_forest)
    base = dict(vocab_size=forest["n_symbols"], num_fields=2, num_labels=forest["n_symbols"],
                num_prelude_layers=1, num_coda_layers=0, **settings.looped_model)
    r_mean, k = settings.looped_iterations
    return {"looped": LoopedConfig(**base, num_recurrent_layers=1, mean_iterations=r_mean, backprop_iterations=k),
            "not-shared, same parameters": LoopedConfig(**base, num_recurrent_layers=1, mean_iterations=1),
            "not-shared, same compute": LoopedConfig(**base, num_recurrent_layers=r_mean, mean_iterations=1)}


def _accuracy_by_depth(logits, batch, test_depth):
    """Accuracy at the nodes of each depth 0..test_depth: a list."""
    right = logits.numpy().argmax(axis=-1) == batch["labels"]     # (B, T), on the host like the batch
    return [float(right[batch["depths"] == d].mean()) for d in range(test_depth + 1)]


def _trainer(config, forest, settings, seed, looped, steps, progress=False):
    ms_random.manual_seed(seed)          # every arm starts from the same initialization stream
    model = LoopedForTokenClassification(config)
    r_mean = settings.looped_iterations[0] if looped else None
    task = PointerForestTask(forest, settings.looped_train_depths, settings.looped_batch_size, seed, r_mean)
    return Trainer(model, task, TrainConfig(steps=steps, lr=settings.looped_lr, eval_every=steps, progress=progress))


def _train(config, forest, settings, seed, looped, progress):
    trainer = _trainer(config, forest, settings, seed, looped, settings.looped_steps, progress)
    trainer.train()
    trainer.model.eval()
    return trainer.model, {k: v for k, v in trainer.history[-1].items() if k.startswith("eval_")}


def trains_here(settings):
    """Every arm trains here, once per seed."""
    forest = PointerForest(**settings.looped_forest)
    return {arm: (settings.looped_steps * len(settings.seeds),
                  lambda steps, config=config, arm=arm: _trainer(config, forest, settings, 0, arm == "looped", steps))
            for arm, config in configs(settings).items()}


def run(out, settings, progress=True):
    forest = PointerForest(**settings.looped_forest)
    test_depth, max_r = settings.looped_test_depth, settings.looped_max_iterations
    arms = configs(settings)
    T = forest.n_chains * (test_depth + 1)
    seeds = {}
    for seed in settings.seeds:
        batch = forest.batch(numpy.random.default_rng((seed, TEST_SEED)), settings.looped_test_forests, test_depth,
                             held_out=True)
        seeds[seed] = {"final": {}}
        for arm, config in arms.items():
            model, final = _train(config, forest, settings, seed, arm == "looped", progress)
            seeds[seed]["final"][arm] = final
            if arm == "looped":
                seeds[seed][arm] = [_accuracy_by_depth(l, batch, test_depth)
                                    for l in model.logits_by_iteration(batch["input_ids"], max_r)]
            else:
                seeds[seed][arm] = _accuracy_by_depth(model(batch["input_ids"]).logits, batch, test_depth)
    sizes = {arm: {"parameters": count_parameters(LoopedForTokenClassification(c)),
                   "macs_per_token": [costs.macs_per_token(c, r, T)["total"] for r in range(1, max_r + 1)]
                   if arm == "looped" else costs.macs_per_token(c, 1, T)["total"]}
             for arm, c in arms.items()}
    return {"forest": dict(settings.looped_forest), "model": dict(settings.looped_model),
            "train_depths": list(settings.looped_train_depths), "test_depth": test_depth,
            "mean_iterations": settings.looped_iterations[0], "backprop_iterations": settings.looped_iterations[1],
            "max_iterations": max_r, "steps": settings.looped_steps, "tokens": T, "sizes": sizes,
            "chance": [forest.no_lookup_accuracy(d) for d in range(test_depth + 1)], "seeds": seeds}


# --- reading the result ------------------------------------------------------------------------------
def beyond(result):
    """The node depths deeper than any in training."""
    return list(range(max(result["train_depths"]) + 1, result["test_depth"] + 1))


def long_r(result):
    """The test-time r the claims read, fixed before the run: twice the training mean."""
    return min(2 * result["mean_iterations"], result["max_iterations"])


def _mean_over(accuracies, depths):
    return sum(accuracies[d] for d in depths) / len(depths)


def beyond_accuracy(result, seed, arm, r=None):
    """Accuracy at the nodes deeper than training (every depth has equally many nodes), of ``arm``
    for one seed; the looped arm at r iterations."""
    s = result["seeds"][str(seed)]                   # result.json keys are strings
    accuracies = s[arm][r - 1] if arm == "looped" else s[arm]
    return _mean_over(accuracies, beyond(result))


def best_r(result, seed):
    """Where thinking longer stops helping: the r with the highest accuracy beyond training."""
    values = [beyond_accuracy(result, seed, "looped", r) for r in range(1, result["max_iterations"] + 1)]
    return 1 + int(numpy.argmax(values)), max(values)


def _seeds(result):
    return list(result["seeds"])


def _label(result):
    m, f = result["model"], result["forest"]
    return (f"pointer forests of {f['n_chains']} chains over {f['n_symbols']} letters, trained at depths "
            f"{result['train_depths'][0]}–{result['train_depths'][-1]}, tested at depth {result['test_depth']}; "
            f"H = {m['hidden_size']}, r̄ = {result['mean_iterations']}, backpropagation through the last "
            f"{result['backprop_iterations']}, {result['steps']} steps")


def figures(result, folder):
    seeds = list(result["seeds"].values())
    depths = list(range(2, result["test_depth"] + 1))     # depths 0 and 1 need no lookup
    curves = {d: [[acc[d] for acc in s["looped"]] for s in seeds] for d in depths}
    levels = {arm: {d: [s[arm][d] for s in seeds] for d in depths} for arm in ARMS[1:]}
    chance = {d: result["chance"][d] for d in depths}
    fig = looped_figure.plot_accuracy_by_iterations(
        curves, levels, chance, result["mean_iterations"], max(result["train_depths"]),
        f"Accuracy against test-time iterations, per node depth: {_label(result)} ({len(seeds)} seeds)")
    return [("Accuracy against test-time iterations r, one panel per node depth (the difficulty); the "
             "looped model's mean and min–max over seeds, the fixed-depth models as lines",
             save_figure(fig, f"{folder}/looped_accuracy_by_iterations"))]


def report(result, figs):
    sizes, r_long = result["sizes"], long_r(result)
    lines = [f"{_label(result)}. Accuracy at the nodes deeper than training (depths "
             f"{beyond(result)[0]}–{beyond(result)[-1]}), mean ± standard deviation (min–max) over "
             f"{len(result['seeds'])} seeds; multiply-accumulates per token at T = {result['tokens']} tokens.", "",
             "| model | parameters | MACs per token | accuracy beyond training |", "|---|---|---|---|"]
    for label, arm, r in (("looped, r = 1", "looped", 1),
                          (f"looped, r = r̄ = {result['mean_iterations']}", "looped", result["mean_iterations"]),
                          (f"looped, r = 2 r̄ = {r_long}", "looped", r_long),
                          ("not-shared, same parameters", ARMS[1], None),
                          ("not-shared, same compute", ARMS[2], None)):
        macs = sizes[arm]["macs_per_token"][r - 1] if arm == "looped" else sizes[arm]["macs_per_token"]
        acc = stats.spread([beyond_accuracy(result, s, arm, r) for s in _seeds(result)])
        lines.append(f"| {label} | {sizes[arm]['parameters']:,} | {macs:,} | {stats.fmt(acc)} |")
    return "\n".join(lines)


FLAT = 0.01       # a curve whose accuracies all lie within this of each other has no peak


def peak_reading(result, seed):
    """Where thinking longer stops helping, for one seed: "r = k (0.812)", or "flat at 0.016" when
    every r scores within ``FLAT`` of the others (the first of equal maxima is no peak)."""
    values = [beyond_accuracy(result, seed, "looped", r) for r in range(1, result["max_iterations"] + 1)]
    if max(values) - min(values) < FLAT:
        return f"flat at {max(values):.3f}"
    r, best = best_r(result, seed)
    return f"r = {r} ({best:.3f})"


def observations(result):
    return [f"Where thinking longer stops helping: accuracy beyond training peaks at "
            f"{'; '.join(peak_reading(result, s) for s in _seeds(result))} (one per seed; tested up to "
            f"r = {result['max_iterations']}, trained with r̄ = {result['mean_iterations']})."]


def claims(result, seeds):
    """Accuracy beyond training, paired by seed: the looped model thinking twice as long as its
    training mean, against itself at r̄ and against the two not-shared models."""
    r_mean, r_long = result["mean_iterations"], long_r(result)

    def values(arm, r=None):
        return [beyond_accuracy(result, s, arm, r) for s in seeds]
    metric, what = "accuracy_beyond_training", "Accuracy at nodes deeper than training"
    paper = "accuracy rises with test-time iterations (Geiping et al., 2025; Yang et al., 2023)"
    looped_long = f"looped at r = {r_long}"
    return [
        ledger.compare("looped.longer_vs_mean", "looped", f"{what}, {looped_long} against r = {r_mean}", metric,
                       "higher", looped_long, f"looped at r = {r_mean}", seeds, values("looped", r_long),
                       values("looped", r_mean), paper, True),
        ledger.compare("looped.vs_same_parameters", "looped", f"{what}, {looped_long} against not-shared with "
                       "the same parameters", metric, "higher", looped_long, ARMS[1], seeds,
                       values("looped", r_long), values(ARMS[1]), None, True),
        ledger.compare("looped.vs_same_compute", "looped", f"{what}, {looped_long} against not-shared with the "
                       f"compute of r = {r_mean}", metric, "higher", looped_long, ARMS[2], seeds,
                       values("looped", r_long), values(ARMS[2]), None, True),
        ledger.compare("looped.longer_vs_chance", "looped", f"{what}, {looped_long} against the best rule "
                       "without lookups", metric, "higher", looped_long, "no-lookup rule", seeds,
                       values("looped", r_long), [_mean_over(result["chance"], beyond(result))] * len(seeds),
                       None, False, gate=False),
    ]


def baselines(result, settings):
    return [ledger.baseline("looped", "accuracy_beyond_training", "a root guessed (the best rule without lookups)",
                            _mean_over(result["chance"], beyond(result)))]


# --- the book's table ---------------------------------------------------------------------------------
def book_rows(settings, said):
    """The chapter's table, row by row: (claim, what the paper reports, what this run measured)."""
    def beyond(arm, r=None):
        def f(res):
            rr = None if r is None else r(res)
            return cells.pct(stats.spread([beyond_accuracy(res, s, arm, rr) for s in cells.get(res, "seeds")]))
        return f

    def peaks(res):
        return "; ".join(peak_reading(res, s) for s in cells.get(res, "seeds"))
    return [
        ("accuracy rises with test-time iterations",
         "recurrent depth: accuracy on reasoning benchmarks rises with test-time iterations (Geiping et al., "
         "2025); a looped Transformer matches a standard one on in-context linear regression with under "
         "10% of its parameters (Yang et al., 2023)",
         lambda res: f"beyond training: {beyond('looped', lambda x: 1)(res)} at r = 1, "
                     f"{beyond('looped', lambda x: x['mean_iterations'])(res)} at r = r̄ = {res['mean_iterations']}, "
                     f"{beyond('looped', long_r)(res)} at r = {long_r(res)}"),
        ("against not-shared models of the same parameters and the same compute", "not reported on this task",
         lambda res: f"same parameters {beyond(ARMS[1])(res)}, same compute {beyond(ARMS[2])(res)}"),
        ("where more iterations stop helping", "not reported on this task",
         lambda res: f"accuracy beyond training peaks at {peaks(res)} (per seed)"),
    ]
