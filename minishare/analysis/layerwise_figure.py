"""ALBERT's Figure 1 drawn from ``layerwise.layer_transitions``: how much each layer changes its
input, as an L2 distance and as an angle, one series per model."""
from minishare.analysis.figure_style import band, book_figure, new_figure, series_style, wrapped


def _seed_curves(values):
    """A curve given once ([v, ...]) or once per seed ([[v, ...], ...]) -> a list of curves."""
    values = list(values)
    return [list(v) for v in values] if values and isinstance(values[0], (list, tuple)) else [values]


@book_figure
def plot_layer_transitions(results, title=None):
    """ALBERT's Figure 1 (Lan et al., 2019): for each layer l = 1..N, the mean L2 distance (left)
    and mean angle in degrees (right) between its input and output, one series per model.

    ``results``: name -> {"l2": ..., "cosine_degrees": ...}, each either one curve of N values
    (``layerwise.layer_transitions(...)``) or one such curve per seed; with several seeds the thick
    line is their mean and each seed is a thin line beside it (a mean can hide a seed that
    behaves otherwise, e.g. a stack that reaches a fixed point in one seed only). A model whose name contains "untrained" is the
    control: drawn without fill in its markers. ``title`` (e.g. the N, E, H and LayerNorm position)
    is put above the panels."""
    if not results:
        raise ValueError("plot_layer_transitions needs at least one model's results")
    fig, axes = new_figure(ncols=2, height=4.6)
    panels = (("l2", "L2 distance", r"mean $\|h_{l+1} - h_l\|_2$"),
              ("cosine_degrees", "Angle (cosine similarity in degrees)",
               r"mean angle of $h_l$, $h_{l+1}$ (°)"))
    seeds = {len(_seed_curves(r["l2"])) for r in results.values()}
    n_layers = 1
    for ax, (key, panel_title, ylabel) in zip(axes[0], panels):
        for i, (name, r) in enumerate(results.items()):
            curves = _seed_curves(r[key])
            mean, _, _ = band(curves)
            layers = list(range(1, len(mean) + 1))
            n_layers = max(n_layers, len(mean))
            style = series_style(i, len(results))
            if len(curves) > 1:
                for curve in curves:
                    ax.plot(layers, curve, color=style["color"], linewidth=0.8, alpha=0.45)
            ax.plot(layers, mean, label=name if len(seeds) == 1 else f"{name}, {len(curves)} seed(s)",
                    markerfacecolor="white" if "untrained" in name else style["color"], **style)
        ax.set_xlabel(r"layer $l$ (input $h_l$, output $h_{l+1}$)")
        ax.set_ylabel(ylabel)
        ax.set_title(panel_title)
        ax.set_xticks(list(range(1, n_layers + 1, max(1, n_layers // 12))))
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="outside lower center", ncols=2)
    lines = [wrapped(title)] if title else []
    lines.append("Input vs output of each layer (ALBERT Fig. 1), mean over non-padding tokens")
    if max(seeds) > 1:
        count = f"{min(seeds)} " if len(seeds) == 1 else ""       # else each label says its own
        lines.append(f"thick line: mean over {count}seeds, thin lines: each seed")
    fig.suptitle("\n".join(lines))
    return fig
