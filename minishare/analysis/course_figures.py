"""Figures of the course's notebooks that no ``reproduce`` experiment draws: finite-difference
error against the step ε, an attention map, a bar chart of one quantity over a few
configurations. Same conventions as the others (``minishare.analysis.figure_style``): a pyplot-free
Figure in the book's style with a title, labelled axes (units in the labels) and a legend where
there is more than one series."""
from minishare.analysis.figure_style import WIDTH, book_figure, new_figure


@book_figure
def plot_finite_difference(eps, errors, title="Central differences: error against the step ε"):
    """Log-log error of a finite-difference derivative against ε. ``errors``: {label: [error per
    ε]} (e.g. central and one-sided). Too large an ε: truncation error (ε² central, ε one-sided);
    too small: round-off (about machine epsilon / ε)."""
    if not errors:
        raise ValueError("plot_finite_difference needs at least one series of errors")
    fig, axes = new_figure()
    ax = axes[0][0]
    for (label, values), marker in zip(errors.items(), "osd^v"):
        ax.loglog(eps, values, marker=marker, label=label)
    ax.set_xlabel("step ε (log scale)")
    ax.set_ylabel("|finite difference − backward()| (log scale)")
    ax.set_title(title)
    ax.legend()
    return fig


@book_figure
def plot_attention(probs, labels=None, title="Attention probabilities"):
    """Heatmaps of attention probabilities, one panel per head. ``probs`` (heads, Tq, Tk), host
    values in [0, 1] (each row sums to 1); ``labels``: token strings of the positions."""
    heads, Tq, Tk = probs.shape
    fig, axes = new_figure(ncols=heads, height=WIDTH / heads + 0.8)   # square maps, titles above
    for h, ax in enumerate(axes[0]):
        image = ax.imshow(probs[h], vmin=0, vmax=1, cmap="Blues")
        ax.set_title(f"head {h}")
        ax.set_xlabel("key position s")
        ax.set_ylabel("query position t")
        if labels is not None:
            ax.set_xticks(range(Tk))
            ax.set_xticklabels(labels[:Tk], rotation=90)
            ax.set_yticks(range(Tq))
            ax.set_yticklabels(labels[:Tq])
    fig.colorbar(image, ax=list(axes[0]), label="probability softmax(QKᵀ/√d)[t, s] (no unit)")
    fig.suptitle(title)
    return fig


@book_figure
def plot_bars(values, ylabel, title, xlabel="configuration"):
    """Grouped bars: ``values`` is {series: {configuration: value}}; every series gets its own
    colour and hatch, bars carry their value, the legend sits outside the axes. For counts, bytes
    and accuracies of a few configurations."""
    if not values:
        raise ValueError("plot_bars needs at least one series")
    configs = list(dict.fromkeys(c for series in values.values() for c in series))
    fig, axes = new_figure(height=4.8)
    ax, width = axes[0][0], 0.8 / len(values)
    for k, ((name, series), hatch) in enumerate(zip(values.items(), ("", "//", "..", "xx", "\\\\"))):
        xs = [i + (k - (len(values) - 1) / 2) * width for i, c in enumerate(configs) if c in series]
        bars = ax.bar(xs, [series[c] for c in configs if c in series], width, label=name, hatch=hatch)
        ax.bar_label(bars, fmt="{:,.3g}", fontsize="small", padding=2,
                     rotation=90 if len(values) > 2 else 0)          # narrow bars: labels upright
    ax.set_xticks(range(len(configs)))
    ax.set_xticklabels(configs, rotation=20, ha="right")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.margins(y=0.18)                                        # room for the value labels
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))   # outside the axes: never over a bar
    return fig
