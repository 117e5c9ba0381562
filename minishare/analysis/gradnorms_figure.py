"""Gradient norms by layer position (``gradnorms.position_gradient_norms``) drawn as a grid: one
row per LayerNorm position, one column per measured training step, one line per sharing plan."""
from minishare.analysis.figure_style import book_figure, new_figure, series_style


@book_figure
def plot_gradient_norms(panels, row_names, steps, title):
    """A grid of per-position gradient norms: one row per LayerNorm position (``row_names``: key
    -> "Post-LN"), one column per measured training step. ``panels[(row, step)]``: plan label ->
    [per seed: [norm at each position]]; each plan is drawn as the mean over seeds (its own line
    style and marker) with a min–max band, on a log scale. The legend sits below the grid; the
    axis labels, the same in every panel, are said once: x on the bottom row, y for the grid."""
    from matplotlib.ticker import FormatStrFormatter, LogLocator, MaxNLocator
    if not panels:
        raise ValueError("plot_gradient_norms needs at least one panel")
    rows, steps = list(row_names), list(steps)
    fig, axes = new_figure(len(rows), len(steps), height=3.0)
    for r, row in enumerate(rows):
        for c, step in enumerate(steps):
            ax = axes[r][c]
            plans = panels[row, step]
            for k, (label, seeds) in enumerate(plans.items()):
                positions = range(1, len(seeds[0]) + 1)
                columns = list(zip(*seeds))
                mean = [sum(v) / len(v) for v in columns]
                style = series_style(k, len(plans))
                ax.fill_between(positions, [min(v) for v in columns], [max(v) for v in columns],
                                color=style["color"], alpha=0.2, linewidth=0)
                ax.plot(positions, mean, label=label, **style)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))      # positions are whole numbers
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
            ax.yaxis.set_minor_formatter(FormatStrFormatter("%g"))
            low, high = ax.get_ylim()
            if high > 3 * low:       # on a tall range a label at every minor tick collides: 2× and 5× only
                ax.yaxis.set_minor_locator(LogLocator(subs=(2, 5)))
            ax.set_title(f"{row_names[row]}, " + ("at initialization" if step == 0 else f"after {step} steps"))
            if r == len(rows) - 1:
                ax.set_xlabel("layer position")
    fig.supylabel("gradient norm (log scale)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels))
    fig.suptitle(title + "\nlayer position 1 is next to the embeddings")
    return fig
