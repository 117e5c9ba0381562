"""Experiment "plans": every sharing plan the other experiments use, drawn as a positions ×
parameter-sets grid."""
from minishare.analysis import plan_figure
from minishare.analysis.figure_style import save_figure
from minishare.sharing import COMPONENTS, Plan

NAME = "plans"
TITLE = "The sharing plans"
ORDER = 20
READS = ("albert", "seq2seq")


def plans(settings):
    N = settings.albert["num_hidden_layers"]
    n = settings.seq2seq["num_hidden_layers"]
    result = {f"ALBERT {name} (N={N})": Plan.build(name, N)
              for name in ("not-shared", "all-shared", "shared-attention", "shared-ffn")}
    result[f"Vanilla (M=N={n})"] = Plan.build("not-shared", n)
    result[f"Universal (M=1, N={n})"] = Plan.build("universal", n)
    for name in ("sequence", "cycle", "cycle-rev"):
        result[f"{name} (M={n}, N={2 * n})"] = Plan.build(name, 2 * n, n)
    return result


def run(out, settings, progress=True):
    return {name: {c: list(plan.schedule(c)) for c in COMPONENTS} for name, plan in plans(settings).items()}


def _plans(result):
    """The Plan objects back from their schedules (the result is plain JSON)."""
    return {name: Plan(schedules, name) for name, schedules in result.items()}


def figures(result, folder):
    fig = plan_figure.plot_plans(_plans(result))
    return [("Every sharing plan used: which parameter set (column) serves each layer position (row)",
             save_figure(fig, f"{folder}/plans"))]


def report(result, figs):
    return "\n".join(["| plan | sets by position (A = first set) |", "|---|---|"] +
                      [f"| {name} | `{str(plan).replace(chr(10), ' / ')}` |" for name, plan in _plans(result).items()])
