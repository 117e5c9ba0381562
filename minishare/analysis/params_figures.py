"""Parameter counts drawn (``params``): ours beside the papers', against one setting, and where
in the model they go."""
import re

from minishare.analysis.figure_style import book_figure, new_figure, series_style

_GROUP_COLORS = {"embedding": "Blues", "encoder": "Oranges", "heads": "Greens"}
_HATCHES = ("", "//", "..", "xx", "\\\\")


def _rounded_count(text):
    """A count as the papers print it ("108M", "4.4M", "63K", "1.2B") -> a float."""
    match = re.fullmatch(r"\s*([0-9.]+)\s*([KMB]?)\s*", str(text), re.IGNORECASE)
    if not match:
        raise ValueError(f"cannot read a parameter count from {text!r}: expected e.g. '108M'")
    return float(match.group(1)) * {"": 1, "K": 1e3, "M": 1e6, "B": 1e9}[match.group(2).upper()]


@book_figure
def plot_param_bars(rows, title, log=False):
    """Grouped bars of parameter counts: ours (exact) beside the paper's (rounded as printed).

    ``rows``: (label, our count, the paper's count as printed, e.g. "12M", or None) for each
    configuration, e.g. ``[(r[1], r[2], r[3]) for r in params.albert_tables()]``. ``log`` puts the
    counts on a log scale (Table 1 spans 12M to 334M)."""
    rows = list(rows)
    if not rows:
        raise ValueError("plot_param_bars needs at least one row (label, ours, paper)")
    fig, axes = new_figure(height=4.8)
    ax, x, w = axes[0][0], range(len(rows)), 0.4
    ours = [row[1] / 1e6 for row in rows]
    bars = ax.bar([i - w / 2 for i in x], ours, w, label="ours (exact)", color="tab:blue")
    ax.bar_label(bars, fmt="%.1f", fontsize="small")
    paper = [(i, _rounded_count(row[2]) / 1e6) for i, row in zip(x, rows) if row[2] is not None]
    if paper:
        ax.bar([i + w / 2 for i, _ in paper], [v for _, v in paper], w, label="paper (rounded)",
               color="tab:gray")
    ax.set_xticks(list(x))
    ax.set_xticklabels([str(row[0]) for row in rows], rotation=30, ha="right")
    ax.set_xlabel("configuration")
    ax.set_ylabel("parameters (millions)" + (", log scale" if log else ""))
    if log:
        ax.set_yscale("log")
    ax.margins(y=0.1)                                   # room for the value labels
    ax.set_title(title)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=2)   # never over a bar
    return fig


@book_figure
def plot_params_vs(xs, series, xlabel, title):
    """Parameters as a function of one setting (the embedding size E, the depth N), one line per
    strategy. ``series``: name -> counts, one per x (e.g. {"not-shared": [...], "all-shared": [...]})."""
    fig, axes = new_figure()
    ax = axes[0][0]
    for i, (name, counts) in enumerate(series.items()):
        ax.plot(xs, [c / 1e6 for c in counts], label=name, **series_style(i, len(series)))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("parameters (millions)")
    ax.set_title(title)
    ax.legend()
    return fig


@book_figure
def plot_param_breakdown(breakdowns, title="Where the parameters go"):
    """Stacked bars of ``params.parameter_breakdown`` per model: millions (left) and percent of the
    model (right). ``breakdowns``: label -> {group: {part: count}}. Parts are shaded by group
    (embedding blue, encoder orange, heads green) and hatched within a group; parts that are 0 in
    every model are left out of the legend, which sits below the panels."""
    import matplotlib
    if not breakdowns:
        raise ValueError("plot_param_breakdown needs at least one model's breakdown")
    labels = list(breakdowns)
    first = next(iter(breakdowns.values()))
    parts = [(group, part) for group in first for part in first[group]
             if any(b[group][part] for b in breakdowns.values())]
    totals = [sum(n for g in b.values() for n in g.values()) for b in breakdowns.values()]
    fig, axes = new_figure(ncols=2, height=6.2)
    for ax, percent in zip(axes[0], (False, True)):
        bottom = [0.0] * len(labels)
        for group in first:
            in_group = [part for g, part in parts if g == group]
            cmap = matplotlib.colormaps[_GROUP_COLORS.get(group, "Greys")]
            for k, part in enumerate(in_group):
                values = [b[group][part] for b in breakdowns.values()]
                heights = [100 * v / t if percent else v / 1e6 for v, t in zip(values, totals)]
                ax.bar(labels, heights, 0.6, bottom=bottom, color=cmap(0.35 + 0.5 * k / max(1, len(in_group) - 1)),
                       hatch=_HATCHES[k % len(_HATCHES)], edgecolor="black", linewidth=0.4,
                       label=f"{group}: {part}")
                bottom = [b + h for b, h in zip(bottom, heights)]
        if not percent:
            for i, t in enumerate(totals):
                ax.text(i, bottom[i], f"{t / 1e6:.1f}M", ha="center", va="bottom", fontsize="small")
        ax.set_ylabel("percent of the model's parameters" if percent else "parameters (millions)")
        ax.set_xlabel("model")
        ax.set_title("share of the model" if percent else "count (total on top)")
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="outside lower center", ncols=2)
    fig.suptitle(title)
    return fig
