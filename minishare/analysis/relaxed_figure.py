"""Held-out loss against unique parameters for the conversions of one trained model (chapter 15,
experiment "relaxed"): the curve from all-shared back to not-shared as the LoRA rank grows,
Basis Sharing's curve as its basis grows, and the models of as many parameters trained from
scratch."""
from minishare.analysis.figure_style import band, book_figure, new_figure, series_style, wrapped


@book_figure
def plot_relaxed(curves, points, title):
    """``curves``: name -> list of (unique parameters, per-seed losses), drawn as a line through
    the means with min–max error bars; ``points``: name -> (unique parameters, per-seed losses),
    a marker each. Parameters on a log axis; markers of the same count are set a little apart
    sideways (3% a marker), so that none hides another."""
    if not curves and not points:
        raise ValueError("plot_relaxed needs at least one curve or point")
    fig, axes = new_figure(height=5.2)
    ax = axes[0][0]
    n = len(curves) + len(points)
    seen = {}                               # parameter count -> markers drawn at it so far
    for i, (name, rows) in enumerate(list(curves.items()) + [(k, [v]) for k, v in points.items()]):
        style = series_style(i, n)
        xs = [x for x, _ in rows]
        if name in points:
            style.update(linestyle="none", markersize=8)
            seen[xs[0]] = seen.get(xs[0], 0) + 1
            xs = [xs[0] * 1.03 ** (seen[xs[0]] - 1)]
        mean, low, high = band([list(v) for v in zip(*[values for _, values in rows])])
        ax.errorbar(xs, mean, yerr=[[m - lo for m, lo in zip(mean, low)], [hi - m for m, hi in zip(mean, high)]],
                    label=name, markerfacecolor="white", capsize=3, **style)
    ax.set_xscale("log")
    ax.set_xlabel("unique parameters (each shared tensor once), log scale")
    ax.set_ylabel("held-out loss (cross-entropy per token, nats)")
    ax.set_title(wrapped(title + "\nmarker: mean over seeds, bar: min–max; markers of one count set apart"))
    # two columns fit the figure's width only while the labels are short; a long one (the
    # from-scratch arms name their budget) would push both columns past the edges
    labels = ax.get_legend_handles_labels()[1]
    fig.legend(loc="outside lower center", ncols=2 if max(map(len, labels)) <= 40 else 1)
    return fig
