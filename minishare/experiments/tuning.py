"""Tuning apart from evaluation: a setting is chosen by training a small grid of its values on the
plan's tuning seeds (``plan.json``: 100 and 101), never on the seeds the claims are judged on. A
value chosen on the seeds it is then judged on is chosen partly for those seeds' luck, and the
comparison inherits the luck as if it were an effect.

A choice is kept only when it is interior: a best value at the edge of its grid says the grid
was too narrow (the best may lie beyond it), so the grid is widened until the best value has a
neighbour on each side.

    python -m minishare.experiments.tuning albert --out runs/tuning

trains the ALBERT grid below on the tuning seeds and prints one row per value; what was run and
chosen is copied into the plan's "tuned" entries before the full run."""
import argparse
import statistics

from minishare.experiments import albert_arms
from minishare.experiments.runs import cached_run
from minishare.experiments.settings import FULL

TUNING_SEEDS = (100, 101)


def best(scores, lower=True):
    """The value whose mean score over seeds is best: ``scores`` is {value: [score per seed]}."""
    means = {value: statistics.fmean(s) for value, s in scores.items()}
    return (min if lower else max)(means, key=means.get)


def interior(choice, grid):
    """Whether ``choice`` has a value of ``grid`` on each side of it."""
    ordered = sorted(grid)
    return ordered[0] < choice < ordered[-1]


def sweep(out, requests, metric, progress=False):
    """Train every request and read ``metric`` from its final held-out metrics: ``requests`` is
    {value: {seed: (run name, request)}}; returns {value: [metric per seed]} in seed order."""
    return {value: [cached_run(out, name, progress, **request)["final"][metric]
                    for _, (name, request) in sorted(by_seed.items())]
            for value, by_seed in requests.items()}


def albert_grid(settings=FULL, lrs=(1e-3, 2e-3, 3e-3, 5e-3), arms=("not-shared", "all-shared"), seeds=TUNING_SEEDS):
    """{(arm, lr): {seed: (run name, request)}} of the ALBERT runs every pre-training experiment
    shares (MLM + SOP, the full tier's width and updates), one per learning rate."""
    grid = {}
    for arm in arms:
        for lr in lrs:
            grid[(arm, lr)] = {seed: (f"tune-{albert_arms.run_name(settings, arm, seed=seed)}-lr{lr:g}",
                                      {**albert_arms.albert_request(settings, arm, seed=seed), "lr": lr})
                               for seed in seeds}
    return grid


def layerwise_grid(settings=FULL, lr=None, batch_sizes=(16,), seeds=TUNING_SEEDS):
    """{batch size: {seed: (run name, request)}} of Figure 1's ALBERT-style model (all-shared, N = 12,
    E = ``settings.layerwise``'s), the arm whose seeds may stay on the unigram plateau: does every
    tuning seed leave it within ``settings.layerwise_steps`` updates at the ALBERT runs' rate?"""
    lr = lr or settings.pretrain_lr
    grid = {}
    for batch_size in batch_sizes:
        grid[batch_size] = {}
        for seed in seeds:
            request = albert_arms.albert_request(settings, "all-shared", seed=seed, steps=settings.layerwise_steps,
                                                 **settings.layerwise)
            grid[batch_size][seed] = (f"tune-layerwise-albert-style-s{seed}-b{batch_size}-lr{lr:g}",
                                      {**request, "batch_size": batch_size, "lr": lr})
    return grid


def golf_looped(grid=((2, 3500), (3, 2400)), seeds=TUNING_SEEDS):
    """The golf experiment's looped design: its mean training depth (the steps keep about 80
    CPU-seconds) and the depth it is scored at, in int8 bits per byte on the validation split."""
    from minishare.experiments import exp_golf
    for mean, steps in grid:
        scores = [exp_golf.looped_depths(mean, steps, seed) for seed in seeds]
        means = {depth: [s[depth] for s in scores] for depth in scores[0]}
        print(f"  mean depth {mean}, {steps} steps: " + "; ".join(
            f"r = {d} " + ", ".join(f"{v:.4f}" for v in values) for d, values in means.items()))
        choice = best(means)
        print(f"  mean depth {mean}: best scoring depth {choice}" + ("" if interior(choice, means) else " (AT THE EDGE)"))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m minishare.experiments.tuning", description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["albert", "layerwise", "golf"])
    parser.add_argument("--out", default="runs/tuning")
    parser.add_argument("--lr", type=float, help="layerwise: the ALBERT runs' rate, as tuned (default: the settings')")
    args = parser.parse_args(argv)
    if args.what == "layerwise":
        for metric in ("eval_mlm_loss", "eval_mlm_unigram_loss"):
            scores = sweep(args.out, layerwise_grid(lr=args.lr), metric)
            for batch_size, values in scores.items():
                print(f"  {metric}, batch {batch_size}: " + ", ".join(f"{v:.4f}" for v in values))
        return
    if args.what == "golf":
        golf_looped()
        return
    grid = albert_grid()
    for metric, lower in (("eval_mlm_loss", True), ("eval_sop_accuracy", False)):
        scores = sweep(args.out, grid, metric, progress=True)
        print(f"\n{metric} on seeds {', '.join(map(str, TUNING_SEEDS))}:")
        for (arm, lr), values in scores.items():
            print(f"  {arm:12s} lr {lr:g}: " + ", ".join(f"{v:.4f}" for v in values))
        for arm in sorted({a for a, _ in grid}):
            mine = {lr: v for (a, lr), v in scores.items() if a == arm}
            choice = best(mine, lower)
            print(f"  {arm}: best lr {choice:g}" + ("" if interior(choice, mine) else " (AT THE EDGE: widen the grid)"))


if __name__ == "__main__":
    main()
