"""Accuracy against test-time iterations, one panel per difficulty: the figure of chapter 14."""
from minishare.analysis.figure_style import book_figure, new_figure, series_style, wrapped


@book_figure
def plot_accuracy_by_iterations(curves, levels, chance, train_mean, trained, title, ncols=3):
    """One panel per node depth d (the difficulty), in ``curves``' order: {d: [per-seed list of
    the looped model's accuracy after r = 1, 2, ... iterations]}, drawn as the mean over seeds
    with a min–max band. ``levels``: {model label: {d: [per-seed accuracy]}}, models of a fixed
    depth, drawn as horizontal lines (their mean) across the panel. ``chance``: {d: accuracy of
    the best rule without lookups}, dotted. ``train_mean``: r̄, marked by a vertical line.
    ``trained``: the deepest node depth training saw; deeper panels say "beyond training"."""
    import numpy
    from minishare.analysis.figure_style import band
    depths = list(curves)
    nrows = -(-len(depths) // ncols)
    fig, axes = new_figure(nrows, ncols, height=2.6)
    for i, d in enumerate(depths):
        ax = axes[i // ncols][i % ncols]
        mean, low, high = band(curves[d])
        xs = numpy.arange(1, len(mean) + 1)
        style = series_style(0, 1 + len(levels))
        ax.plot(xs, mean, label="looped (one shared block), mean over seeds", **{**style, "markersize": 3})
        ax.fill_between(xs, low, high, color=style["color"], alpha=0.2, label="looped: min–max over seeds")
        for k, (label, per_depth) in enumerate(levels.items(), start=1):
            values = per_depth[d]
            ax.axhline(sum(values) / len(values), color=f"C{k}", linestyle=series_style(k)["linestyle"],
                       label=f"{label} (fixed depth), mean")
        ax.axhline(chance[d], color="grey", linestyle=":", label="best rule without lookups")
        ax.axvline(train_mean, color="black", linewidth=0.8, alpha=0.5, label="r̄, the training mean")
        ax.set_ylim(-0.03, 1.03)
        ax.set_title(f"depth {d}" + (" (beyond training)" if d > trained else ""))
        if i % ncols == 0:
            ax.set_ylabel("accuracy")
        if i // ncols == nrows - 1 or i + ncols >= len(depths):
            ax.set_xlabel("test-time iterations r")
    for j in range(len(depths), nrows * ncols):
        axes[j // ncols][j % ncols].set_visible(False)
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="outside lower center", ncols=2)
    fig.suptitle(wrapped(title))
    return fig
