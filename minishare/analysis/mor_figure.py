"""Accuracy against the mean number of passes per token, and the passes per node depth: the
figure of chapter 16 (tokens that choose their depth)."""
from minishare.analysis.figure_style import book_figure, new_figure, series_style, wrapped


@book_figure
def plot_accuracy_against_passes(points, by_depth, chance, max_passes, title):
    """Two panels.

    ``points``: {model label: ([per-seed mean passes], [per-seed accuracy])}. Labels starting
    "fixed" are drawn as one line through their means (every token at r passes, r = 1, 2, ...),
    with each seed a small dot; the others (the adaptive rules) as a large marker at their mean
    with each seed a small dot of the same colour. ``chance``: the best rule without lookups,
    dotted. ``by_depth``: {adaptive model label: [per-seed list of the mean passes at node depth
    0, 1, ...]}, drawn as the mean over seeds with a min–max band; ``max_passes`` bounds the axis."""
    import numpy
    from minishare.analysis.figure_style import band
    fig, axes = new_figure(1, 2, height=3.6)
    ax = axes[0][0]
    fixed = [label for label in points if label.startswith("fixed")]
    xs = [numpy.mean(points[label][0]) for label in fixed]
    ys = [numpy.mean(points[label][1]) for label in fixed]
    style = series_style(0, 1 + len(points) - len(fixed))
    ax.plot(xs, ys, label="fixed depth: every token r passes (mean over seeds)", **style)
    for label in fixed:
        ax.plot(*points[label], linestyle="none", marker=".", color=style["color"], alpha=0.5)
    adaptive = [label for label in points if label not in fixed]
    for k, label in enumerate(adaptive, start=1):
        color = series_style(k, 1 + len(adaptive))["color"]
        passes, accuracy = points[label]
        ax.plot(passes, accuracy, linestyle="none", marker=".", color=color, alpha=0.6)
        ax.plot([numpy.mean(passes)], [numpy.mean(accuracy)], linestyle="none", marker="D", markersize=8,
                color=color, label=f"{label} (mean over seeds; dots: seeds)")
    ax.axhline(chance, color="grey", linestyle=":", label="best rule without lookups")
    ax.set_xlabel("mean passes through the shared layer per token")
    ax.set_ylabel("held-out accuracy (all nodes)")
    ax.set_title("accuracy against compute")
    ax = axes[0][1]
    for k, label in enumerate(adaptive, start=1):
        mean, low, high = band(by_depth[label])
        depths = numpy.arange(len(mean))
        style = series_style(k, 1 + len(adaptive))
        ax.plot(depths, mean, label=f"{label}: mean over seeds", **style)
        ax.fill_between(depths, low, high, color=style["color"], alpha=0.2)
    ax.set_ylim(0, max_passes + 0.3)
    ax.set_xlabel("node depth (lookups its answer needs)")
    ax.set_ylabel("mean passes")
    ax.set_title("where the passes went")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=2)
    fig.suptitle(wrapped(title))
    return fig
