"""A sharing plan drawn with matplotlib: rows are layer positions, the first layer at the bottom;
columns are parameter sets; a filled cell marks the set a position uses (``draw_plan``). Several
plans side by side: ``plot_plans``."""
from minishare.analysis.figure_style import book_figure, new_figure, wrapped
from minishare.errors import MissingPackage


def draw_plan(plan, ax=None, component=None):
    """Draw ``plan`` on ``ax`` (a new figure by default) and return the Axes. ``component`` picks
    one component; by default every component appears, side by side when they differ
    (cross_attention only where it differs from attention). Needs matplotlib."""
    try:
        import matplotlib.pyplot as plt
        from matplotlib.patches import Rectangle
    except ImportError as error:
        raise MissingPackage("draw_plan needs matplotlib: pip install matplotlib") from error
    from minishare.sharing import label
    shown = [component] if component is not None else plan.shown_components()
    columns = []      # (tick label, schedule, set index), left to right
    boundaries = []   # x between two components' columns
    for c in shown:
        schedule = plan.schedule(c or "attention")
        prefix = "" if c is None or component is not None else f"{c} "
        if columns:
            boundaries.append(len(columns) - 0.5)
        columns += [(prefix + label(k), schedule, k) for k in range(max(schedule) + 1)]
    if ax is None:
        _, ax = plt.subplots(figsize=(1 + 0.5 * len(columns), 1 + 0.4 * plan.n_layers))
    for x in boundaries:
        ax.axvline(x, color="gray", linewidth=1)
    for x, (_, schedule, k) in enumerate(columns):
        for y, index in enumerate(schedule):   # y = 0 is the first layer, drawn at the bottom
            if index == k:
                ax.add_patch(Rectangle((x - 0.45, y - 0.45), 0.9, 0.9, color="tab:blue"))
    ax.set_xlim(-0.5, len(columns) - 0.5)
    ax.set_ylim(-0.5, plan.n_layers - 0.5)
    ax.set_xticks(range(len(columns)))
    ax.set_xticklabels([text for text, _, _ in columns], rotation=90 if len(shown) > 1 else 0)
    ax.set_yticks(range(plan.n_layers))
    ax.set_xlabel("parameter set")
    ax.set_ylabel("layer position (0 = first layer, at the bottom)")
    title = plan.name if component is None else f"{plan.name}: {component}"
    ax.set_title(f"{title} (N = {plan.n_layers})")
    return ax


@book_figure
def plot_plans(plans, ncols=4):
    """A grid of ``draw_plan`` panels (positions × parameter sets), one per plan; ``plans``:
    name -> ``minishare.sharing.Plan``; each panel is titled with its name."""
    if not plans:
        raise ValueError("plot_plans needs at least one plan")
    ncols = min(ncols, len(plans))
    nrows = -(-len(plans) // ncols)
    tallest = max(plan.n_layers for plan in plans.values())
    fig, axes = new_figure(nrows, ncols, height=1.6 + 0.35 * tallest)
    flat = [ax for row in axes for ax in row]
    for ax, (name, plan) in zip(flat, plans.items()):
        draw_plan(plan, ax)
        ax.set_title(wrapped(name, 18))      # a panel a quarter of the width
        ax.set_ylabel("layer position")   # the suptitle says where the first layer is
    for ax in flat[len(plans):]:
        ax.set_axis_off()
    fig.suptitle("Sharing plans: which parameter set (column) serves each layer position\n(row, "
                 "first layer at the bottom)")
    return fig
