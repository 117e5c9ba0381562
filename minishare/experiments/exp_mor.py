"""Experiment "mor": tokens that choose their depth. On pointer forests (``data.forest``) the
depth of a node is how many lookups its answer needs, so the tokens of one forest differ in
difficulty and a model that spends its passes where they are needed should beat one that spends
them evenly. One recursive token classifier (``models.RecursiveForTokenClassification``: a
prelude layer, one shared layer passed through up to N_r times, a head), three depth rules:

- fixed depth, r = 1 .. N_r: every token takes r passes (the Recursive Transformer); these draw
  the line of accuracy against compute that the adaptive rules are set against;
- ACT (Graves, 2016; ``nn.act``): every token halts on its own within N_r steps, its mean number
  of passes set by the ponder cost τ, so measured after training rather than chosen;
- Mixture-of-Recursions with expert-choice routing (Bae et al., 2025; ``nn.mor``): step r takes
  the top ⌊c_r T⌋ tokens of step r − 1, so the mean number of passes is Σ_r c_r, fixed before
  training, and each step attends only among the tokens it took.

The training batches mix forests of several depths (``train_depths``), so that the deep nodes of
the deepest need more passes than one and a fixed depth pays for its passes; the held-out forests
have the deepest training depth. Every arm of a seed trains on the same batches from the same
initialization stream and is scored on the same held-out forests. The claims set MoR against the
fixed depth with the same mean passes (r = Σ c_r, an integer by the choice of capacities: equal
compute by construction, counted in passes) and against ACT, and ask whether each adaptive rule
gives the deep nodes more passes than the shallow ones. Beside the counted compute, the measured:
each trained arm's host time for a training step, the arms taking turns on the same batches.
"""
import time

import numpy   # host-side scoring of predictions

from minishare import backend, random as ms_random
from minishare.analysis import mor as costs, mor_figure
from minishare.analysis.figure_style import save_figure
from minishare.analysis.params import count_parameters
from minishare.data import PointerForest
from minishare.experiments import book_cells as cells, claims as ledger, stats
from minishare.models import RecursionConfig, RecursiveForTokenClassification
from minishare.tasks import RoutedForestTask
from minishare.tensor import no_grad
from minishare.train import TrainConfig, Trainer

NAME = "mor"
TITLE = "Tokens that choose their depth: Mixture-of-Recursions beside ACT"
ORDER = 180
READS = ("mor",)

TEST_SEED = 20_000         # the test forests: apart from the training batches and the task's own
SHALLOW = 1                # nodes of depth <= 1 need at most one lookup (a root, or a root's child)
TIMING_ROUNDS = 5          # training steps timed per arm after training (the median is kept)
EQUAL_TIME = 0.10          # measured step times within 10% of each other count as equal compute


def configs(settings):
    """{arm: RecursionConfig}: "fixed, r = 1" .. "fixed, r = N_r", "ACT", "MoR"."""
    m = settings.mor
    forest = dict(m["forest"])
    base = dict(vocab_size=forest["n_symbols"], num_fields=2, num_labels=forest["n_symbols"], **m["model"])
    n = len(m["capacities"])
    arms = {f"fixed, r = {r}": RecursionConfig(**base, num_recursions=r) for r in range(1, n + 1)}
    arms["ACT"] = RecursionConfig(**base, num_recursions=n, routing="act", act_loss_weight=m["act_weight"])
    arms["MoR"] = RecursionConfig(**base, num_recursions=n, routing="expert-choice",
                                  capacities=tuple(m["capacities"]), router_alpha=m["router_alpha"],
                                  router_aux_loss_weight=m["router_aux_weight"])
    return arms


def matched_r(result):
    """The fixed depth with MoR's mean passes Σ c_r (the settings make it an integer)."""
    return int(round(result["mor_mean_passes"]))


def _measure(model, batch, depth):
    """Accuracy and mean passes, overall and at each node depth 0..depth, on held-out forests."""
    with no_grad():
        out = model(batch["input_ids"])
    right = backend.to_numpy(out.logits.data).argmax(axis=-1) == batch["labels"]      # (B, T)
    passes = backend.to_numpy(out.passes)
    at = [batch["depths"] == d for d in range(depth + 1)]
    return {"accuracy": float(right.mean()), "passes": float(passes.mean()),
            "accuracy_by_depth": [float(right[m].mean()) for m in at],
            "passes_by_depth": [float(passes[m].mean()) for m in at],
            "tokens_per_step": costs.tokens_per_step(passes, model.config.num_recursions)}


def training_task(forest, settings, seed):
    """The training batches of every arm: forests of the depths ``train_depths``, mixed."""
    m = settings.mor
    return RoutedForestTask(forest, tuple(m["train_depths"]), m["batch_size"], seed)


def _trainer(config, forest, settings, seed, steps, progress=False):
    ms_random.manual_seed(seed)          # every arm starts from the same initialization stream
    model = RecursiveForTokenClassification(config)
    return Trainer(model, training_task(forest, settings, seed),
                   TrainConfig(steps=steps, lr=settings.mor["lr"], eval_every=steps, progress=progress))


def _train(config, forest, settings, seed, progress):
    trainer = _trainer(config, forest, settings, seed, settings.mor["steps"], progress)
    trainer.train()
    trainer.model.eval()
    return trainer.model


def trains_here(settings):
    """Every arm trains here, once per seed."""
    forest = PointerForest(**settings.mor["forest"])
    return {arm: (settings.mor["steps"] * len(settings.seeds),
                  lambda steps, config=config: _trainer(config, forest, settings, 0, steps))
            for arm, config in configs(settings).items()}


def step_seconds(models, forest, settings, seed):
    """{arm: host process seconds of one training step}, the median of TIMING_ROUNDS. In each round
    the arms take turns, each on the same batch of forests of the test depth (the T the counted
    compute is for), so a slow stretch of a shared machine falls on all of them; a first step,
    untimed, sets up each optimizer's state. The steps train the models on, after their scoring."""
    m = settings.mor
    task = RoutedForestTask(forest, (m["depth"],), m["batch_size"], seed)
    trainers = {arm: Trainer(model, task, TrainConfig(steps=TIMING_ROUNDS + 1, lr=m["lr"], progress=False))
                for arm, model in models.items()}
    times = {arm: [] for arm in models}
    for turn in range(TIMING_ROUNDS + 1):
        for arm, trainer in trainers.items():
            start = time.process_time()
            trainer.train_step()
            if turn:
                times[arm].append(time.process_time() - start)
    return {arm: float(numpy.median(t)) for arm, t in times.items()}


def run(out, settings, progress=True):
    m = settings.mor
    forest = PointerForest(**m["forest"])
    depth, arms = m["depth"], configs(settings)
    T = forest.n_chains * (depth + 1)
    seeds = {}
    for seed in settings.seeds:
        batch = forest.batch(numpy.random.default_rng((seed, TEST_SEED)), m["test_forests"], depth, held_out=True)
        models = {arm: _train(c, forest, settings, seed, progress) for arm, c in arms.items()}
        seeds[seed] = {arm: _measure(model, batch, depth) for arm, model in models.items()}
        for arm, seconds in step_seconds(models, forest, settings, seed).items():
            seeds[seed][arm]["step_seconds"] = seconds
    sizes = {}
    for arm, c in arms.items():
        steps = None if arm != "ACT" else [numpy.mean([s[arm]["tokens_per_step"][r] for s in seeds.values()])
                                           for r in range(c.num_recursions)]
        sizes[arm] = {"parameters": count_parameters(RecursiveForTokenClassification(c)),
                      "macs_per_token": costs.macs_per_token(c, T, steps)["total"]}
    return {"forest": dict(m["forest"]), "model": dict(m["model"]), "depth": depth,
            "train_depths": list(m["train_depths"]), "capacities": list(m["capacities"]),
            "router_alpha": m["router_alpha"], "router_aux_weight": m["router_aux_weight"],
            "act_loss_weight": m["act_weight"],
            "mor_mean_passes": costs.mean_passes(costs.planned_tokens_per_step(arms["MoR"], T), T),
            "steps": m["steps"], "tokens": T, "sizes": sizes,
            "chance": [forest.no_lookup_accuracy(d) for d in range(depth + 1)], "seeds": seeds}


# --- reading the result ------------------------------------------------------------------------------
def _seeds(result):
    return list(result["seeds"])


def _values(result, arm, key, seeds=None):
    return [result["seeds"][str(s)][arm][key] for s in (seeds or _seeds(result))]


def _passes_split(result, arm, seed):
    """Mean passes at the deep nodes (depth > SHALLOW) and at the shallow ones (every depth has
    equally many nodes, so the mean of the depths' means is the nodes' mean)."""
    by_depth = result["seeds"][str(seed)][arm]["passes_by_depth"]
    return float(numpy.mean(by_depth[SHALLOW + 1:])), float(numpy.mean(by_depth[:SHALLOW + 1]))


def chance(result):
    """The accuracy of the best rule without lookups, over the nodes of a forest."""
    return float(numpy.mean(result["chance"]))


def fixed_arms(result):
    return [arm for arm in result["sizes"] if arm.startswith("fixed")]


def _label(result):
    m, f = result["model"], result["forest"]
    caps = ", ".join(f"{c:g}" for c in result["capacities"])
    # a result of the earlier design trained at the test depth alone, with neither α nor the auxiliary loss
    trained = ", ".join(map(str, result.get("train_depths", [result["depth"]])))
    router = (f", router α = {result['router_alpha']:g}, auxiliary loss weight {result['router_aux_weight']:g}"
              if "router_alpha" in result else "")
    return (f"pointer forests of {f['n_chains']} chains, trained on depths {trained} mixed, tested at depth "
            f"{result['depth']} ({result['tokens']} tokens); H = {m['hidden_size']}, one prelude layer, one shared "
            f"layer up to N_r = {len(result['capacities'])} passes; MoR capacities {caps}{router}; ACT τ = "
            f"{result['act_loss_weight']}; {result['steps']} steps")


def figures(result, folder):
    seeds = list(result["seeds"].values())
    points = {arm: ([s[arm]["passes"] for s in seeds], [s[arm]["accuracy"] for s in seeds]) for arm in result["sizes"]}
    by_depth = {arm: [s[arm]["passes_by_depth"] for s in seeds] for arm in ("ACT", "MoR")}
    fig = mor_figure.plot_accuracy_against_passes(
        points, by_depth, chance(result), len(result["capacities"]),
        f"Tokens that choose their depth: {_label(result)} ({len(seeds)} seeds)")
    return [("Held-out accuracy against the mean number of passes per token (fixed depths as a line, ACT and "
             "MoR as points, each seed a dot), and the passes each adaptive rule gave the nodes of each depth",
             save_figure(fig, f"{folder}/mor_accuracy_against_passes"))]


def report(result, figs):
    sizes = result["sizes"]
    lines = [f"{_label(result)}. Held-out accuracy over all nodes and at the nodes deeper than {SHALLOW}, mean ± "
             f"standard deviation (min–max) over {len(result['seeds'])} seeds; multiply-accumulates per token at "
             f"T = {result['tokens']} (ACT's from its measured passes); measured host milliseconds per training "
             f"step at the test depth (each seed's median of {TIMING_ROUNDS}, mean over seeds).", "",
             "| model | parameters | mean passes | MACs per token | ms per step | accuracy | accuracy, deep nodes |",
             "|---|---|---|---|---|---|---|"]
    for arm in sizes:
        deep = stats.spread([float(numpy.mean(result["seeds"][s][arm]["accuracy_by_depth"][SHALLOW + 1:]))
                             for s in _seeds(result)])
        lines.append(f"| {arm} | {sizes[arm]['parameters']:,} | {stats.fmt(stats.spread(_values(result, arm, 'passes')))} "
                     f"| {sizes[arm]['macs_per_token']:,.0f} "
                     f"| {f'{1000 * _step_seconds(result, arm):.1f}' if _timed(result) else 'not measured'} "
                     f"| {stats.fmt(stats.spread(_values(result, arm, 'accuracy')))} "
                     f"| {stats.fmt(deep)} |")
    lines += ["", "Mean passes at each node depth (mean over seeds):", "",
              "| model | " + " | ".join(f"depth {d}" for d in range(result["depth"] + 1)) + " |",
              "|---" * (result["depth"] + 2) + "|"]
    for arm in ("ACT", "MoR"):
        per = numpy.mean([result["seeds"][s][arm]["passes_by_depth"] for s in _seeds(result)], axis=0)
        lines.append(f"| {arm} | " + " | ".join(f"{v:.2f}" for v in per) + " |")
    return "\n".join(lines)


def _timed(result):
    """Whether the arms' step times were measured (a result of the earlier design has none)."""
    return "step_seconds" in next(iter(result["seeds"].values()))["MoR"]


def _step_seconds(result, arm):
    return float(numpy.mean(_values(result, arm, "step_seconds")))


def time_ratio(result):
    """MoR's measured seconds per training step over those of the fixed depth with its mean passes."""
    return _step_seconds(result, "MoR") / _step_seconds(result, f"fixed, r = {matched_r(result)}")


def observations(result):
    act = stats.spread(_values(result, "ACT", "passes"))
    passes = [f"ACT's mean passes per token came out at {stats.fmt(act)} (set by τ = {result['act_loss_weight']} "
              f"through training); MoR's are {result['mor_mean_passes']:g} by its capacities, the same for every seed."]
    if not _timed(result):
        return passes
    ratio, r = time_ratio(result), matched_r(result)
    return passes + [
            f"Equal passes, measured: a training step of MoR took {ratio:.2f} times the host time of one of fixed "
            f"r = {r}, " + (f"within {EQUAL_TIME:.0%}, so the pair is at equal measured compute too."
                            if abs(ratio - 1) <= EQUAL_TIME else
                            f"not within {EQUAL_TIME:.0%}: the pair is at equal counted compute (passes per token), "
                            "not at equal measured time (the count leaves out MoR's routers, gathers and scatters).")]


def claims(result, seeds):
    """Held-out accuracy, paired by seed: MoR against the fixed depth with its mean passes and
    against ACT, ACT against that fixed depth; and whether each adaptive rule gives the deep nodes
    more passes than the shallow ones."""
    r = matched_r(result)
    fixed = f"fixed, r = {r}"
    metric, what = "accuracy", "Held-out accuracy over all nodes"
    paper = "at equal compute, MoR beats fixed-depth recursion (Bae et al., 2025)"
    found = [
        ledger.compare("mor.vs_fixed_same_passes", "mor", f"{what}, MoR ({result['mor_mean_passes']:g} passes per "
                       f"token on average) against every token at {r} passes", metric, "higher", "MoR", fixed, seeds,
                       _values(result, "MoR", metric, seeds), _values(result, fixed, metric, seeds), paper, True),
        ledger.compare("mor.vs_act", "mor", f"{what}, MoR against ACT (ACT's mean passes measured, MoR's "
                       f"{result['mor_mean_passes']:g})", metric, "higher", "MoR", "ACT", seeds,
                       _values(result, "MoR", metric, seeds), _values(result, "ACT", metric, seeds), None, True),
        ledger.compare("mor.act_vs_fixed", "mor", f"{what}, ACT against every token at {r} passes", metric, "higher",
                       "ACT", fixed, seeds, _values(result, "ACT", metric, seeds),
                       _values(result, fixed, metric, seeds), None, False),
    ]
    for arm in ("MoR", "ACT"):
        deep, shallow = zip(*(_passes_split(result, arm, s) for s in seeds))
        found.append(ledger.compare(f"mor.{arm.lower()}_deep_vs_shallow", "mor", f"{arm}'s mean passes, nodes deeper "
                                    f"than {SHALLOW} against nodes of depth {SHALLOW} or less", "passes", "higher",
                                    "deep nodes", "shallow nodes", seeds, deep, shallow,
                                    "the router sends harder tokens through more recursions (Bae et al., 2025)"
                                    if arm == "MoR" else None, False, says="take more passes"))
    return found


def baselines(result, settings):
    return [ledger.baseline("mor", "accuracy", "a root guessed (the best rule without lookups)", chance(result))]


# --- the book's table ---------------------------------------------------------------------------------
def book_rows(settings, said):
    """The chapter's table, row by row: (claim, what the paper reports, what this run measured)."""
    def accuracy(arm):
        return lambda res: cells.pct(stats.spread([cells.get(res, "seeds", s, arm, "accuracy") for s in cells.get(res, "seeds")]))

    def passes(arm):
        return lambda res: cells.num(stats.spread([cells.get(res, "seeds", s, arm, "passes") for s in cells.get(res, "seeds")]))
    return [
        ("at equal compute, MoR beats a recursive model whose every token takes every pass",
         "at equal training FLOPs, and with fewer parameters, MoR reaches a lower validation perplexity than "
         "the vanilla and recursive baselines, from 135M to 1.7B parameters (Bae et al., 2025, abstract)",
         lambda res: said("mor.vs_fixed_same_passes")),
        ("MoR beside ACT on the same task", "not compared in the paper",
         lambda res: f"MoR {accuracy('MoR')(res)} at {res['mor_mean_passes']:g} passes, ACT {accuracy('ACT')(res)} "
                     f"at {passes('ACT')(res)} passes; " + said("mor.vs_act")),
        ("the router gives harder tokens more recursions",
         "in the paper's routing example (its Figure 1), tokens that carry content take more recursion "
         "steps than function words (Bae et al., 2025)",
         lambda res: said("mor.mor_deep_vs_shallow")),
    ]
