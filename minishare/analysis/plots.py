"""The course's figures, drawn from plain results (dicts and lists of numbers).

Each ``plot_*`` function returns a matplotlib ``Figure`` with a title, labelled axes (units in the
labels) and a legend where there is more than one line. Figures are built with
``matplotlib.figure.Figure`` rather than pyplot, so a script that draws many keeps no windows open;
in a notebook, display one by evaluating it. ``save_figure`` writes PNG (notebooks, README) and SVG
(the book).

matplotlib is imported inside the functions: ``import minishare`` needs NumPy alone.
"""
import os
import re
import textwrap

from minishare.files import atomic_write

MIB = 2 ** 20
_MEMORY_PARTS = (("parameters", "parameters"), ("gradients", "gradients"),
                 ("optimizer", "optimizer state"), ("activations", "activations"))
_X_LABELS = {"step": "training step", "wall_clock": "training wall-clock time (s)",
             "depth": "layer positions N"}


def new_figure(nrows=1, ncols=1, width=6.4, height=4.4):
    """A pyplot-free Figure with a grid of Axes (always 2-D: axes[row][col]); ``width`` and
    ``height`` are inches per panel."""
    try:
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError("minishare's figures need matplotlib: pip install matplotlib") from error
    fig = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    return fig, fig.subplots(nrows, ncols, squeeze=False)


def save_figure(fig, path_without_suffix, dpi=150):
    """Write ``fig`` as ``<path>.png`` (rendered with Agg) and ``<path>.svg``; returns the two
    paths. Each file is written under a temporary name in the same folder, then renamed, so a
    reader never sees half a figure. Missing folders are created. The files carry no date and the
    SVG's element ids are salted with a constant, so redrawing the same figure rewrites the same
    bytes (committed figures change only when their content does)."""
    import matplotlib
    path = os.fspath(path_without_suffix)
    if os.path.splitext(path)[1].lower() in (".png", ".svg", ".pdf"):
        raise ValueError(f"save_figure takes a path without suffix (it writes .png and .svg), got {path!r}")
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    written = []
    for fmt, options in (("png", {"dpi": dpi, "backend": "agg", "metadata": {"Software": None}}),
                         ("svg", {"metadata": {"Date": None}})):
        final = f"{path}.{fmt}"
        with atomic_write(final, "wb") as f, matplotlib.rc_context({"svg.hashsalt": "minishare"}):
            fig.savefig(f, format=fmt, **options)
        written.append(final)
    return tuple(written)


# --- parameters --------------------------------------------------------------------------------
def _rounded_count(text):
    """A count as the papers print it ("108M", "4.4M", "63K", "1.2B") -> a float."""
    match = re.fullmatch(r"\s*([0-9.]+)\s*([KMB]?)\s*", str(text), re.IGNORECASE)
    if not match:
        raise ValueError(f"cannot read a parameter count from {text!r}: expected e.g. '108M'")
    return float(match.group(1)) * {"": 1, "K": 1e3, "M": 1e6, "B": 1e9}[match.group(2).upper()]


def plot_param_bars(rows, title, log=False):
    """Grouped bars of parameter counts: ours (exact) beside the paper's (rounded as printed).

    ``rows``: (label, our count, the paper's count as printed, e.g. "12M", or None) for each
    configuration, e.g. ``[(r[1], r[2], r[3]) for r in params.albert_tables()]``. ``log`` puts the
    counts on a log scale (Table 1 spans 12M to 334M)."""
    rows = list(rows)
    if not rows:
        raise ValueError("plot_param_bars needs at least one row (label, ours, paper)")
    fig, axes = new_figure(width=max(6.4, 0.9 * len(rows) + 2))
    ax, x, w = axes[0][0], range(len(rows)), 0.4
    ours = [row[1] / 1e6 for row in rows]
    bars = ax.bar([i - w / 2 for i in x], ours, w, label="ours (exact)", color="tab:blue")
    ax.bar_label(bars, fmt="%.1f", fontsize=8)
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
    ax.set_title(title)
    ax.legend()
    return fig


def plot_params_vs(xs, series, xlabel, title):
    """Parameters as a function of one setting (the embedding size E, the depth N), one line per
    strategy. ``series``: name -> counts, one per x (e.g. {"not-shared": [...], "all-shared": [...]})."""
    fig, axes = new_figure()
    ax = axes[0][0]
    for name, counts in series.items():
        ax.plot(xs, [c / 1e6 for c in counts], marker="o", label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("parameters (millions)")
    ax.set_title(title)
    ax.legend()
    return fig


# --- ALBERT Figure 1 ---------------------------------------------------------------------------
def _seed_curves(values):
    """A curve given once ([v, ...]) or once per seed ([[v, ...], ...]) -> a list of curves."""
    values = list(values)
    return [list(v) for v in values] if values and isinstance(values[0], (list, tuple)) else [values]


def plot_layer_transitions(results, title=None):
    """ALBERT's Figure 1 (Lan et al., 2019): for each layer l = 1..N, the mean L2 distance (left)
    and mean angle in degrees (right) between its input and output, one series per model.

    ``results``: name -> {"l2": ..., "cosine_degrees": ...}, each either one curve of N values
    (``layerwise.layer_transitions(...)``) or one such curve per seed; with several seeds the line
    is their mean and the band spans min to max. A model whose name contains "untrained" is the
    control: drawn without fill in its markers. ``title`` (e.g. the N, E, H and LayerNorm position)
    is put above the panels."""
    if not results:
        raise ValueError("plot_layer_transitions needs at least one model's results")
    fig, axes = new_figure(ncols=2, width=5.0)
    panels = (("l2", "L2 distance", r"mean $\|h_{l+1} - h_l\|_2$"),
              ("cosine_degrees", "Angle (cosine similarity in degrees)",
               r"mean angle between $h_l$ and $h_{l+1}$ (degrees)"))
    n_layers, most_seeds = 1, max(len(_seed_curves(r["l2"])) for r in results.values())
    for ax, (key, panel_title, ylabel) in zip(axes[0], panels):
        for i, (name, r) in enumerate(results.items()):
            curves = _seed_curves(r[key])
            mean, low, high = band(curves)
            layers = list(range(1, len(mean) + 1))
            n_layers = max(n_layers, len(mean))
            style = series_style(i, len(results))
            if len(curves) > 1:
                ax.fill_between(layers, low, high, color=style["color"], alpha=0.18, linewidth=0)
            ax.plot(layers, mean, label=name if most_seeds == 1 else f"{name}, {len(curves)} seed(s)",
                    markerfacecolor="white" if "untrained" in name else style["color"], **style)
        ax.set_xlabel(r"layer $l$ (input $h_l$, output $h_{l+1}$)")
        ax.set_ylabel(ylabel)
        ax.set_title(panel_title)
        ax.set_xticks(list(range(1, n_layers + 1, max(1, n_layers // 12))))
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="outside lower center", ncols=2, fontsize=8)
    over_seeds = "; line: mean over seeds, band: min–max" if most_seeds > 1 else ""
    fig.suptitle((title + "\n" if title else "") + "Input vs output of each layer (ALBERT Fig. 1); mean over "
                 "non-padding tokens" + over_seeds, fontsize=10)
    return fig


def plot_metric_vs(xs, series, xlabel, ylabel, title, log_x=False):
    """A final metric against one setting (the embedding size E, ...), one series per model kind:
    ``series``: name -> one list per x of the per-seed values; the line is the mean, the band the
    min–max, and every seed is a small dot."""
    if not series:
        raise ValueError("plot_metric_vs needs at least one series")
    fig, axes = new_figure(width=7.6)
    ax = axes[0][0]
    for i, (name, per_x) in enumerate(series.items()):
        if len(per_x) != len(xs):
            raise ValueError(f"plot_metric_vs: {name!r} has {len(per_x)} points for {len(xs)} x values")
        style = series_style(i, len(series))
        mean = [sum(v) / len(v) for v in per_x]
        ax.fill_between(xs, [min(v) for v in per_x], [max(v) for v in per_x], color=style["color"],
                        alpha=0.18, linewidth=0)
        ax.plot(xs, mean, label=f"{name}, mean of {len(per_x[0])} seeds", markerfacecolor="white", **style)
        ax.plot([x for x, v in zip(xs, per_x) for _ in v], [y for v in per_x for y in v],
                color=style["color"], marker=".", linestyle="none", alpha=0.6)
    if log_x:
        ax.set_xscale("log", base=2)
    ax.set_xticks(list(xs))
    ax.set_xticklabels([str(x) for x in xs])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title + "\nline: mean over seeds, band: min–max, dots: single seeds", fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    return fig


# --- training curves ---------------------------------------------------------------------------
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


# Line styles and markers cycle independently of colour, so series stay apart in greyscale print
# and where one curve lies on top of another.
LINE_STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def series_style(i, n=1):
    """Colour, line style, marker and marker size of series ``i`` of ``n`` in a figure. Earlier
    series get larger markers, so a later one drawn on the same point sits inside it and both show."""
    return dict(color=f"C{i % 10}", linestyle=LINE_STYLES[i % len(LINE_STYLES)], marker=MARKERS[i % len(MARKERS)],
                markersize=4 + 4 * (n - 1 - i) / max(1, n - 1))


def band(curves):
    """Mean, min and max, point by point, of equally long curves (one per seed)."""
    columns = list(zip(*curves))
    return ([sum(c) / len(c) for c in columns], [min(c) for c in columns], [max(c) for c in columns])


def plot_convergence(histories, x="step", y="loss", window=10, eval_y=None, title=None):
    """Training curves over seeds: ``y`` against ``x`` ("step" or "wall_clock", seconds).

    ``histories``: label -> the histories of that configuration's seeds, each the rows
    ``Trainer.train()`` returns (or ``read_history`` reads back); a single history is taken as one
    seed. Each seed's curve is smoothed by a trailing moving average over ``window`` steps; the
    line is their mean and the shaded band spans their min to max, step by step (against
    wall-clock time the x of a step is its mean over seeds). Held-out values ``eval_y`` (default
    ``"eval_" + y``) are drawn as markers at their seed mean with min–max error bars; pass e.g.
    ``y="mlm_loss", eval_y="eval_mlm_loss"`` where the held-out metric has another name. Every
    series has its own colour, line style and marker; the legend sits outside the axes."""
    if not histories:
        raise ValueError("plot_convergence needs at least one history")
    eval_y = eval_y or f"eval_{y}"
    fig, axes = new_figure(width=8.6)
    ax = axes[0][0]
    n_seeds, runs = set(), _runs(histories)
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
        ax.plot(xs, mean, markevery=max(1, length // 8), label=name, **style)
        at = [j for j, row in enumerate(seeds[0]) if eval_y in row]
        if at:
            e_mean, e_low, e_high = band([[rows[j][eval_y] for j in at] for rows in seeds])
            ax.errorbar([xs[j] for j in at], e_mean, yerr=[[m - lo for m, lo in zip(e_mean, e_low)],
                                                           [hi - m for m, hi in zip(e_mean, e_high)]],
                        color=style["color"], marker=style["marker"], markerfacecolor="white",
                        markersize=style["markersize"] + 2, linestyle="none", capsize=3,
                        label=f"{name}: held-out {(eval_y[5:] if eval_y.startswith('eval_') else eval_y).replace('_', ' ')}")
    ax.set_xlabel(_X_LABELS.get(x, x))
    ax.set_ylabel(y.replace("_", " ") + (" (cross-entropy, nats)" if y.endswith("loss") else ""))
    seeds_text = "/".join(str(n) for n in sorted(n_seeds))
    # a long caller's title is wrapped: centred over the axes, one long line runs off the figure
    ax.set_title(("\n".join(textwrap.wrap(title, 70)) + "\n" if title else "")
                 + f"training {y.replace('_', ' ')}: moving average over {window} steps; line: mean of "
                 f"{seeds_text} seed(s), band: min–max\nopen markers: held-out, mean and min–max", fontsize=9)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    return fig


# --- memory and time ---------------------------------------------------------------------------
def plot_memory(rows):
    """Stacked bars of the memory of one training step per configuration, in MiB: parameters,
    gradients, optimizer state, activations. ``rows``: (label, ``memory.memory_breakdown(...)``)
    pairs; the rows of ``memory.depth_sweep`` carry the same keys: ``[(r["name"], r) for r in ...]``."""
    rows = list(rows)
    if not rows:
        raise ValueError("plot_memory needs at least one (label, breakdown) row")
    fig, axes = new_figure(width=max(6.4, 0.8 * len(rows) + 2.5))
    ax, x = axes[0][0], range(len(rows))
    bottom = [0.0] * len(rows)
    for key, label in _MEMORY_PARTS:
        heights = [breakdown[key] / MIB for _, breakdown in rows]
        bars = ax.bar(list(x), heights, 0.6, bottom=bottom, label=label)
        bottom = [b + h for b, h in zip(bottom, heights)]
    ax.bar_label(bars, labels=[f"{b:.2f}" for b in bottom], fontsize=8)   # totals on top
    ax.set_xticks(list(x))
    ax.set_xticklabels([str(label) for label, _ in rows], rotation=30, ha="right")
    ax.set_xlabel("configuration")
    ax.set_ylabel("memory (MiB)")
    ax.set_title("Memory of one training step: sharing shrinks weights, gradients and\n"
                 "optimizer state, not activations (total on top)")
    ax.legend()
    return fig


def plot_step_time(depths, series, ylabel="seconds (median)"):
    """Seconds per training step (left) and per inference forward pass (right) against depth N,
    one line per strategy, each with its own line style and marker. ``series``: name -> one
    ``memory.step_time(...)`` result ({"train": s, "inference": s}) per depth; ``memory.depth_sweep``
    returns exactly that shape. Entries that also carry "train_range" / "inference_range" (low,
    high), e.g. the min and max over timing rounds, get a band."""
    if not series:
        raise ValueError("plot_step_time needs at least one series")
    fig, axes = new_figure(ncols=2, width=5.2)
    panels = (("train", "Training step (forward + backward + update)"),
              ("inference", "Inference (forward, no graph)"))
    for ax, (key, title) in zip(axes[0], panels):
        for k, (name, times) in enumerate(series.items()):
            linestyle, marker = _STYLES[k % len(_STYLES)]
            ax.plot(depths, [t[key] for t in times], color=f"C{k}", linestyle=linestyle, marker=marker,
                    label=name)
            if all(f"{key}_range" in t for t in times):
                ax.fill_between(depths, [t[f"{key}_range"][0] for t in times],
                                [t[f"{key}_range"][1] for t in times], color=f"C{k}", alpha=0.2, linewidth=0)
        ax.set_xlabel(_X_LABELS["depth"])
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.set_title(title)
    axes[0][0].legend()
    fig.suptitle("Time against depth: shared and not-shared models compute the same FLOPs")
    return fig


# --- sharing plans -----------------------------------------------------------------------------
def plot_plans(plans, ncols=4):
    """A grid of ``Plan.draw`` panels (positions × parameter sets), one per plan; ``plans``:
    name -> ``minishare.sharing.Plan``; each panel is titled with its name."""
    if not plans:
        raise ValueError("plot_plans needs at least one plan")
    ncols = min(ncols, len(plans))
    nrows = -(-len(plans) // ncols)
    tallest = max(plan.n_layers for plan in plans.values())
    fig, axes = new_figure(nrows, ncols, width=3.6, height=1.6 + 0.35 * tallest)
    flat = [ax for row in axes for ax in row]
    for ax, (name, plan) in zip(flat, plans.items()):
        plan.draw(ax)
        ax.set_title(name, fontsize=9)
        ax.set_ylabel("layer position")   # the suptitle says where the first layer is
    for ax in flat[len(plans):]:
        ax.set_axis_off()
    fig.suptitle("Sharing plans: which parameter set (column) serves each layer position (row, "
                 "first layer at the bottom)")
    return fig


# --- where parameters and compute go; gradient norms by layer position ---------------------------
_GROUP_COLORS = {"embedding": "Blues", "encoder": "Oranges", "heads": "Greens"}
_HATCHES = ("", "//", "..", "xx", "\\\\")


def plot_param_breakdown(breakdowns, title="Where the parameters go"):
    """Stacked bars of ``params.parameter_breakdown`` per model: millions (left) and percent of the
    model (right). ``breakdowns``: label -> {group: {part: count}}. Parts are shaded by group
    (embedding blue, encoder orange, heads green) and hatched within a group; parts that are 0 in
    every model are left out of the legend, which sits outside the axes."""
    import matplotlib
    if not breakdowns:
        raise ValueError("plot_param_breakdown needs at least one model's breakdown")
    labels = list(breakdowns)
    first = next(iter(breakdowns.values()))
    parts = [(group, part) for group in first for part in first[group]
             if any(b[group][part] for b in breakdowns.values())]
    totals = [sum(n for g in b.values() for n in g.values()) for b in breakdowns.values()]
    fig, axes = new_figure(ncols=2, width=4.2, height=4.8)
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
                ax.text(i, bottom[i], f"{t / 1e6:.1f}M", ha="center", va="bottom", fontsize=8)
        ax.set_ylabel("percent of the model's parameters" if percent else "parameters (millions)")
        ax.set_xlabel("model")
        ax.set_title("share of the model" if percent else "count (total on top)")
    axes[0][1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=7)
    fig.suptitle(title)
    return fig


def plot_flops(presets, check=None, seq_len=512, check_batch=None):
    """Left: forward FLOPs per token against parameters, one labelled point per preset (rows of
    ``flops.preset_table``), log-log. Right (with ``check``, the rows of the "flops" experiment):
    measured CPU seconds per training step against training FLOPs per step for tiny models, the
    median with the min–max range over rounds, and the line time ∝ FLOPs through the smallest."""
    from matplotlib.ticker import FormatStrFormatter
    if not presets:
        raise ValueError("plot_flops needs at least one preset row")
    fig, axes = new_figure(ncols=2 if check else 1, width=5.6, height=4.6)
    ax = axes[0][0]
    markers = "osD^v<>"
    for i, r in enumerate(presets):
        ax.plot(r["parameters"] / 1e6, r["forward_gflops"], marker=markers[i % len(markers)],
                linestyle="none", color=f"C{i}", markersize=8, label=r["name"])
        ax.annotate(r["name"], (r["parameters"] / 1e6, r["forward_gflops"]), xytext=(6, -3),
                    textcoords="offset points", fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("parameters (millions, log scale)")
    ax.set_ylabel(f"forward GFLOPs per token at T = {seq_len} (log scale)")
    ax.set_title("Compute against parameters (ALBERT Table 1's models)\n"
                 "sharing cuts parameters, not FLOPs")
    ax.margins(x=0.25, y=0.2)
    if check:
        ax = axes[0][1]
        x = [r["step_gflops"] for r in check]
        med = [sorted(r["cpu_s"]["values"])[len(r["cpu_s"]["values"]) // 2] for r in check]
        lo = [m - r["cpu_s"]["min"] for m, r in zip(med, check)]
        hi = [r["cpu_s"]["max"] - m for m, r in zip(med, check)]
        ax.errorbar(x, med, yerr=[lo, hi], marker="o", linestyle="none", capsize=3,
                    label="measured (median, min–max)")
        for xi, yi, r in zip(x, med, check):
            ax.annotate(r["name"], (xi, yi), xytext=(6, -10), textcoords="offset points", fontsize=8)
        span = [min(x) * 0.8, max(x) * 1.25]
        ax.plot(span, [med[0] * s / x[0] for s in span], linestyle="--", color="gray",
                label="time ∝ FLOPs (through the smallest)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        batch = f", batch {check_batch[0]} × {check_batch[1]} tokens" if check_batch else ""
        ax.set_xlabel(f"training GFLOPs per step (3 × forward{batch})")
        ax.set_ylabel("CPU seconds per training step (log scale)")
        ax.set_title("Measured step time against FLOPs\n(tiny ALBERTs, E = 32, FFN 4H, Post-LN)")
        ax.legend(loc="upper left", fontsize=8)
    for ax in axes[0]:
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_formatter(FormatStrFormatter("%g"))
            axis.set_minor_formatter(FormatStrFormatter(""))
    return fig


_STYLES = (("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"), ((0, (5, 1, 1, 1)), "v"))


def plot_gradient_norms(panels, row_names, steps, title):
    """A grid of per-position gradient norms: one row per LayerNorm position (``row_names``: key
    -> "Post-LN"), one column per measured training step. ``panels[(row, step)]``: plan label ->
    [per seed: [norm at each position]]; each plan is drawn as the mean over seeds (its own line
    style and marker) with a min–max band, on a log scale. The legend sits below the grid."""
    from matplotlib.ticker import FormatStrFormatter, LogLocator
    if not panels:
        raise ValueError("plot_gradient_norms needs at least one panel")
    rows, steps = list(row_names), list(steps)
    fig, axes = new_figure(len(rows), len(steps), width=4.0, height=3.2)
    for r, row in enumerate(rows):
        for c, step in enumerate(steps):
            ax = axes[r][c]
            for k, (label, seeds) in enumerate(panels[row, step].items()):
                positions = range(1, len(seeds[0]) + 1)
                columns = list(zip(*seeds))
                mean = [sum(v) / len(v) for v in columns]
                linestyle, marker = _STYLES[k % len(_STYLES)]
                ax.fill_between(positions, [min(v) for v in columns], [max(v) for v in columns],
                                color=f"C{k}", alpha=0.2, linewidth=0)
                ax.plot(positions, mean, color=f"C{k}", linestyle=linestyle, marker=marker,
                        markersize=4, label=label)
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
            ax.yaxis.set_minor_formatter(FormatStrFormatter("%g"))
            low, high = ax.get_ylim()
            if high > 3 * low:       # on a tall range a label at every minor tick collides: 2× and 5× only
                ax.yaxis.set_minor_locator(LogLocator(subs=(2, 5)))
            ax.set_title(f"{row_names[row]}, " + ("at initialization" if step == 0 else f"after {step} steps"),
                         fontsize=10)
            ax.set_xlabel("layer position (1 = next to the embeddings)")
            ax.set_ylabel("gradient norm (log scale)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), fontsize=9)
    fig.suptitle(title, fontsize=10)
    return fig


# --- Adaptive Computation Time --------------------------------------------------------------------
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
    fig, axes = new_figure(nrows=2, width=max(7.0, 0.55 * width + 3), height=0.45 * len(strips) + 2.2)
    ax = axes[0][0]
    grid = numpy.full((len(strips), width), numpy.nan)
    for r, (_, tokens, times) in enumerate(strips):
        grid[r, :len(times)] = times
    image = ax.imshow(grid, cmap="viridis", vmin=2, vmax=max_steps + 1, aspect="auto")
    for r, (_, tokens, times) in enumerate(strips):
        for c, (token, t) in enumerate(zip(tokens, times)):
            ax.text(c, r, token, ha="center", va="center", fontsize=7 if len(token) > 2 else 9,
                    color="black" if t > 2 + 0.6 * (max_steps - 1) else "white")
    ax.set_yticks(range(len(strips)))
    ax.set_yticklabels([label for label, _, _ in strips], fontsize=8)
    ax.set_xticks(range(width))
    ax.set_xlabel("token position")
    ax.set_ylabel("sequence")
    ax.set_title("example sequences: each token coloured by its ponder time")
    fig.colorbar(image, ax=ax, label="ponder time N + R (steps)")
    ax = axes[1][0]
    for k, (label, per_seed) in enumerate(curves.items()):
        length = max(len(c) for c in per_seed)
        values = numpy.full((len(per_seed), length), numpy.nan)
        for s, c in enumerate(per_seed):
            values[s, :len(c)] = c
        xs = numpy.arange(length)
        linestyle, marker = _STYLES[k % len(_STYLES)]
        ax.plot(xs, numpy.nanmean(values, axis=0), color=f"C{k}", linestyle=linestyle, marker=marker,
                label=f"{label}: mean of {len(per_seed)} seeds")
        ax.fill_between(xs, numpy.nanmin(values, axis=0), numpy.nanmax(values, axis=0), color=f"C{k}",
                        alpha=0.2, label=f"{label}: min–max over seeds")
    ax.set_xlabel("token position")
    ax.set_ylabel("mean ponder time N + R (steps)")
    ax.set_title("mean ponder time at each token position (held-out examples)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncols=2, fontsize=8)
    fig.suptitle(title, fontsize=10)
    return fig


def plot_communication(counted, ring, timed=None, title_shape=""):
    """Left: megabytes each rank sends per data-parallel step (a ring Allreduce of the float32
    gradients) against the number of ranks K, one bar per sharing variant. ``counted``: {variant:
    {"bytes", ...}}; ``ring``: {variant: {str(K): bytes}}. Right (when ``timed`` is given): seconds
    of a step's compute and of its Allreduce against the bytes the step sends, on log-log axes, one
    point per variant (median, bars min–max over rounds), with the line of slope 1 (time
    proportional to the bytes) through the largest Allreduce. ``timed``: {"buffer_bytes": {variant: bytes}, "times": {variant:
    {"compute_wall": [s, ...], "allreduce_wall": [...]}}}."""
    import statistics
    variants = list(counted)
    if not variants:
        raise ValueError("plot_communication needs at least one variant")
    fig, axes = new_figure(ncols=2 if timed else 1, width=5.6)
    ax = axes[0][0]
    Ks = sorted(int(K) for K in ring[variants[0]])
    width = 0.8 / len(variants)
    for i, name in enumerate(variants):
        xs = [k + (i - (len(variants) - 1) / 2) * width for k in range(len(Ks))]
        ax.bar(xs, [ring[name][str(K)] / 1e6 for K in Ks], width, color=f"C{i}", label=name)
    ax.set_xticks(range(len(Ks)))
    ax.set_xticklabels([str(K) for K in Ks])
    ax.set_xlabel("ranks K")
    ax.set_ylabel("MB (10⁶ bytes) sent per rank and step")
    ax.set_title("ALBERT-base shape, counted: ring Allreduce of the\n"
                 "gradients, 2 (K − 1) / K × 4 bytes × distinct parameters")
    ax.legend(fontsize=8)
    if timed:
        ax = axes[0][1]
        mb = [timed["buffer_bytes"][name] / 1e6 for name in variants]
        for key, label, marker in (("compute_wall", "compute (forward + backward)", "o"),
                                   ("allreduce_wall", "Allreduce", "s")):
            values = [timed["times"][name][key] for name in variants]
            med = [statistics.median(v) for v in values]
            err = [[m - min(v) for m, v in zip(med, values)], [max(v) - m for m, v in zip(med, values)]]
            ax.errorbar(mb, med, yerr=err, fmt=marker + "-", capsize=3, label=label)
            if key == "compute_wall":
                order = sorted(range(len(mb)), key=lambda i: mb[i])     # neighbours above and below
                for rank, i in enumerate(order):
                    above = rank % 2 == 0
                    ax.annotate(variants[i], (mb[i], max(values[i]) if above else min(values[i])),
                                textcoords="offset points", xytext=(0, 5 if above else -5), ha="center",
                                va="bottom" if above else "top", fontsize=7)
            if key == "allreduce_wall":      # slope 1 on log-log axes, through the largest buffer
                top = max(range(len(mb)), key=lambda i: mb[i])
                low = min(mb) / 1.5
                ax.plot([low, mb[top]], [med[top] * low / mb[top], med[top]], "k:", linewidth=1,
                        label="proportional to the bytes")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(min(mb) / 1.6, max(mb) * 1.6)
        ax.set_ylim(ax.get_ylim()[0], ax.get_ylim()[1] * 2)     # room for the names
        ax.set_xlabel("MB (10⁶ bytes) the step's Allreduce sends (log)")
        ax.set_ylabel("seconds per step (log; median, min–max bars)")
        ax.set_title("\n".join(textwrap.wrap(f"Timed ({title_shape}): compute against Allreduce", 50)))
        ax.legend(fontsize=8, loc="center left")
    return fig
