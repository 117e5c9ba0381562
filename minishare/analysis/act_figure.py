"""Ponder time per token (``act.ponder_times``) drawn two ways: example sequences as heat strips,
and the mean at each token position over seeds."""
from minishare.analysis.figure_style import FONT_SIZE, book_figure, new_figure, series_style


@book_figure
def plot_ponder_time(strips, curves, max_steps, title):
    """Ponder time per token, ρ = N + R steps (``minishare.analysis.act``), in two panels.

    ``strips``: [(row label, tokens, times)], a few example sequences drawn as a heat strip: one
    row each, every cell a token coloured by its ponder time, the token written in it.
    ``curves``: {label: [per-seed list of the mean ponder time at each token position]}: the mean
    over seeds as a line with markers, the min–max over seeds as a band. The colour scale spans
    the possible range [2, max_steps + 1] (halting after one step gives R = 1, so ρ = 2)."""
    import numpy
    if not strips or not curves:
        raise ValueError("plot_ponder_time needs at least one example sequence and one curve")
    width = max(len(tokens) for _, tokens, _ in strips)
    fig, axes = new_figure(nrows=2, height=0.3 * len(strips) + 2.0)
    ax = axes[0][0]
    grid = numpy.full((len(strips), width), numpy.nan)
    for r, (_, tokens, times) in enumerate(strips):
        grid[r, :len(times)] = times
    image = ax.imshow(grid, cmap="viridis", vmin=2, vmax=max_steps + 1, aspect="auto")
    for r, (_, tokens, times) in enumerate(strips):
        for c, (token, t) in enumerate(zip(tokens, times)):
            ax.text(c, r, token, ha="center", va="center", fontsize=FONT_SIZE - (3 if len(token) > 2 else 1),
                    color="black" if t > 2 + 0.6 * (max_steps - 1) else "white")
    ax.set_yticks(range(len(strips)))
    ax.set_yticklabels([label for label, _, _ in strips])
    ax.set_xticks(range(width))
    ax.set_xlabel("token position")
    ax.set_ylabel("sequence")
    ax.set_title("example sequences: each token coloured by its ponder time")
    # below the strip, not beside it: beside, it would narrow the curves' panel too (one column)
    fig.colorbar(image, ax=ax, location="bottom", shrink=0.6,
                 label=f"ponder time ρ = N + R: N ≤ {max_steps} steps, remainder R ≤ 1, so ρ ≤ {max_steps + 1}")
    ax = axes[1][0]
    for k, (label, per_seed) in enumerate(curves.items()):
        length = max(len(c) for c in per_seed)
        values = numpy.full((len(per_seed), length), numpy.nan)
        for s, c in enumerate(per_seed):
            values[s, :len(c)] = c
        xs = numpy.arange(length)
        style = series_style(k, len(curves))
        ax.plot(xs, numpy.nanmean(values, axis=0), label=f"{label}: mean of {len(per_seed)} seeds", **style)
        ax.fill_between(xs, numpy.nanmin(values, axis=0), numpy.nanmax(values, axis=0), color=style["color"],
                        alpha=0.2, label=f"{label}: min–max over seeds")
    ax.set_xlabel("token position")
    ax.set_ylabel("mean ponder time N + R (steps)")
    ax.set_title("mean ponder time at each token position (held-out examples)")
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=2)
    fig.suptitle(title)
    return fig
