"""A complete experiment of ``reproduce`` in one file, kept outside the package: the test of the
experiment interface (``tests/test_toy_experiment.py``) registers it and runs it. It is the
template of the contributor's page: copy it to ``minishare/experiments/exp_NAME.py`` and it is
found without editing any other file.

The question it asks is a small true one: on the copy task, does a 2-layer stack beat a 1-layer
one after a few updates? Two arms, paired by seed, one claim, a no-model baseline, one figure."""
import math

from minishare.analysis.figure_style import new_figure, save_figure
from minishare.experiments import book_cells as cells, claims as ledger, stats
from minishare.experiments.runs import cached_run
from minishare.run.build import make_task

NAME = "toy"
TITLE = "A toy experiment: one layer against two on the copy task"
ORDER = 1000                  # after the package's own
READS = ()                    # it reads no shared field of Settings ...
TIERS = {"quick": {"toy_steps": 3}, "full": {"toy_steps": 30}, "long": {"toy_steps": 300}}   # ... only its own
ARMS = {"one layer": 1, "two layers": 2}
BOOK_TABLES = ("toy",)        # the table its chapter would include


def _request(settings, layers, seed):
    return dict(task="copy", overrides=dict(hidden_size=8, num_attention_heads=2, intermediate_size=16,
                                            num_hidden_layers=layers), steps=settings.toy_steps,
                batch_size=4, lr=3e-3, eval_every=settings.toy_steps, seed=seed)


def requests(settings, out=None):
    return {f"toy-{layers}-s{seed}": _request(settings, layers, seed)
            for layers in ARMS.values() for seed in settings.seeds}


def run(out, settings, progress=True):
    losses = {arm: [cached_run(out, f"toy-{layers}-s{seed}", progress, **_request(settings, layers, seed))
                    ["final"]["eval_loss"] for seed in settings.seeds]
              for arm, layers in ARMS.items()}
    return {"seeds": list(settings.seeds), "losses": losses}


def figures(result, folder):
    fig, axes = new_figure()
    ax = axes[0][0]
    for arm, values in result["losses"].items():
        ax.plot(result["seeds"], values, "o-", label=arm)
    ax.set(xlabel="seed", ylabel="held-out loss", title="Toy: held-out loss per seed")
    ax.legend()
    return [("Held-out loss of each arm, per seed", save_figure(fig, f"{folder}/toy_losses"))]


def report(result, figures):
    return "\n".join(["| arm | held-out loss |", "|---|---|"] +
                     [f"| {arm} | {stats.fmt(stats.spread(v))} |" for arm, v in result["losses"].items()])


def claims(result, seeds):
    return [ledger.compare("toy.two_vs_one", NAME, "Held-out loss, two layers against one", "eval_loss", "lower",
                           "two layers", "one layer", seeds, result["losses"]["two layers"],
                           result["losses"]["one layer"], primary=True)]


def baselines(result, settings):
    _, V = make_task("copy", 0, 1, 1)
    return [ledger.baseline(NAME, "eval_loss", "uniform over the vocabulary", math.log(V))]


def book_tables(result, settings, said):
    rows = [("depth helps on the copy task", "a claim of no paper", lambda r: said("toy.two_vs_one")),
            ("the one-layer arm's loss", "–", lambda r: cells.num(stats.spread(cells.get(r, "losses", "one layer"))))]
    return {"toy": cells.claims_table(NAME, rows, result, settings)}
