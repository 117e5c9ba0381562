"""Figures of training runs over seeds: the loss against steps or time (``plot_convergence``), and
a final metric against one setting (``plot_metric_vs``). Each configuration is trained over
several seeds; a line is the mean over them and a band their min to max, so a reader sees whether
two configurations differ by more than the seeds do."""
import math

from minishare.analysis.figure_style import band, book_figure, new_figure, series_style, wrapped

_X_LABELS = {"step": "training step", "wall_clock": "training wall-clock time (s)"}


def moving_average(values, window):
    """Trailing mean of the last ``window`` values at each point (fewer at the start), so the
    curve keeps its length and never looks ahead."""
    sums, out = [0.0], []
    for v in values:
        sums.append(sums[-1] + v)
    for i in range(1, len(values) + 1):
        lo = max(0, i - window)
        out.append((sums[i] - sums[lo]) / (i - lo))
    return out


def _runs(histories):
    """{label: [history, ...]} from {label: [history, ...]} or {label: history} (one run), where a
    history is a list of row dicts."""
    runs = {}
    for name, value in histories.items():
        value = list(value)
        runs[name] = [value] if value and isinstance(value[0], dict) else value
        if not runs[name] or not all(runs[name]):
            raise ValueError(f"plot_convergence: {name!r} has no history (an empty list of rows)")
    return runs


def _metric(name):
    return (name[5:] if name.startswith("eval_") else name).replace("_", " ")


@book_figure
def plot_convergence(histories, x="step", y="loss", window=10, eval_y=None, title=None, perplexity=False):
    """Training curves over seeds: ``y`` against ``x`` ("step" or "wall_clock", seconds).

    ``histories``: label -> the histories of that configuration's seeds, each the rows
    ``Trainer.train()`` returns (or ``read_history`` reads back); a single history is taken as one
    seed. Each seed's curve is smoothed by a trailing moving average over ``window`` steps; the
    line is their mean and the shaded band spans their min to max, step by step (against
    wall-clock time the x of a step is its mean over seeds). Held-out values ``eval_y`` (default
    ``"eval_" + y``) are drawn as open markers at their seed mean with min–max error bars; pass e.g.
    ``y="mlm_loss", eval_y="eval_mlm_loss"`` where the held-out metric has another name. Every
    series has its own colour, line style and marker; the legend, below the axes, names each
    configuration once and says once what an open marker is. ``perplexity``: a right-hand axis
    reads a cross-entropy in nats as perplexity, e^loss, the number language-modelling tables give."""
    if not histories:
        raise ValueError("plot_convergence needs at least one history")
    from matplotlib.lines import Line2D
    eval_y = eval_y or f"eval_{y}"
    fig, axes = new_figure(height=5.6)
    ax = axes[0][0]
    n_seeds, runs, lines, held_out = set(), _runs(histories), [], False
    for i, (name, seeds) in enumerate(runs.items()):
        seeds = [[row for row in rows if x in row and y in row] for rows in seeds]
        if not all(seeds):
            raise ValueError(f"plot_convergence: a history of {name!r} has no rows with both {x!r} and {y!r}")
        length = min(len(rows) for rows in seeds)       # runs of one configuration have equal steps
        seeds = [rows[:length] for rows in seeds]
        n_seeds.add(len(seeds))
        style = series_style(i, len(runs))
        xs = band([[row[x] for row in rows] for rows in seeds])[0]
        mean, low, high = band([moving_average([row[y] for row in rows], window) for rows in seeds])
        ax.fill_between(xs, low, high, color=style["color"], alpha=0.18, linewidth=0)
        lines += ax.plot(xs, mean, markevery=max(1, length // 8), label=name, **style)
        at = [j for j, row in enumerate(seeds[0]) if eval_y in row]
        if at:
            held_out = True
            e_mean, e_low, e_high = band([[rows[j][eval_y] for j in at] for rows in seeds])
            ax.errorbar([xs[j] for j in at], e_mean, yerr=[[m - lo for m, lo in zip(e_mean, e_low)],
                                                           [hi - m for m, hi in zip(e_mean, e_high)]],
                        color=style["color"], marker=style["marker"], markerfacecolor="white",
                        markersize=style["markersize"] + 2, linestyle="none", capsize=3,
                        label=f"{name}: held-out {_metric(eval_y)}")
    ax.set_xlabel(_X_LABELS.get(x, x))
    ax.set_ylabel(y.replace("_", " ") + (" (cross-entropy, nats)" if y.endswith("loss") else ""))
    if perplexity:       # a log axis from e^low to e^high lies exactly beside the loss from low to high
        from matplotlib.ticker import FormatStrFormatter
        low, high = ax.get_ylim()
        right = ax.twinx()
        right.set_yscale("log")
        right.set_ylim(math.exp(low), math.exp(high))
        right.yaxis.set_major_formatter(FormatStrFormatter("%g"))
        right.yaxis.set_minor_formatter(FormatStrFormatter("%g"))
        right.set_ylabel(f"perplexity = exp({y.replace('_', ' ')}), no unit")
    seeds_text = "/".join(str(n) for n in sorted(n_seeds))
    seeds_text += " seed" if seeds_text == "1" else " seeds"
    ax.set_title((wrapped(title) + "\n" if title else "")
                 + f"line: training {y.replace('_', ' ')}, moving average over {window} steps, mean of "
                 f"{seeds_text}; band: min–max")
    if held_out:       # one entry for every configuration's open markers, in grey
        lines.append(Line2D([], [], color="gray", marker="o", markerfacecolor="white", markersize=7,
                            linestyle="none", label=f"open markers: held-out {_metric(eval_y)}, mean; bars: min–max"))
    fig.legend(handles=lines, loc="outside lower center", ncols=2)
    return fig


@book_figure
def plot_metric_vs(xs, series, xlabel, ylabel, title, log_x=False):
    """A final metric against one setting (the embedding size E, ...), one series per model kind:
    ``series``: name -> one list per x of the per-seed values; the line is the mean, the band the
    min–max, and every seed is a small dot."""
    if not series:
        raise ValueError("plot_metric_vs needs at least one series")
    fig, axes = new_figure(height=5.0)
    ax = axes[0][0]
    n_seeds = set()
    for i, (name, per_x) in enumerate(series.items()):
        if len(per_x) != len(xs):
            raise ValueError(f"plot_metric_vs: {name!r} has {len(per_x)} points for {len(xs)} x values")
        style = series_style(i, len(series))
        n_seeds.update(len(v) for v in per_x)
        mean = [sum(v) / len(v) for v in per_x]
        ax.fill_between(xs, [min(v) for v in per_x], [max(v) for v in per_x], color=style["color"],
                        alpha=0.18, linewidth=0)
        ax.plot(xs, mean, label=name, markerfacecolor="white", **style)
        ax.plot([x for x, v in zip(xs, per_x) for _ in v], [y for v in per_x for y in v],
                color=style["color"], marker=".", linestyle="none", alpha=0.6)
    if log_x:
        ax.set_xscale("log", base=2)
    ax.set_xticks(list(xs))
    ax.set_xticklabels([str(x) for x in xs])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    seeds_text = "/".join(str(n) for n in sorted(n_seeds))
    ax.set_title(title + f"\nline: mean of {seeds_text} seeds, band: min–max, dots: single seeds")
    fig.legend(loc="outside lower center", ncols=len(series))
    return fig
