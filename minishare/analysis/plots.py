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

from minishare.files import atomic_write

MIB = 2 ** 20
_MEMORY_PARTS = (("parameters", "parameters"), ("gradients", "gradients"),
                 ("optimizer", "optimizer state"), ("activations", "activations"))
_X_LABELS = {"step": "training step", "wall_clock": "training wall-clock time (s)",
             "depth": "layer positions N"}


def _figure(nrows=1, ncols=1, width=6.4, height=4.4):
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
    fig, axes = _figure(width=max(6.4, 0.9 * len(rows) + 2))
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
    fig, axes = _figure()
    ax = axes[0][0]
    for name, counts in series.items():
        ax.plot(xs, [c / 1e6 for c in counts], marker="o", label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("parameters (millions)")
    ax.set_title(title)
    ax.legend()
    return fig


# --- ALBERT Figure 1 ---------------------------------------------------------------------------
def plot_layer_transitions(results):
    """ALBERT's Figure 1 (Lan et al., 2019): for each layer l = 1..N, the mean L2 distance (left)
    and mean angle in degrees (right) between its input and output, one line per model.

    ``results``: name -> ``layerwise.layer_transitions(...)``, i.e. {"l2": [N], "cosine_degrees":
    [N]}. A model whose name contains "untrained" is drawn dashed: it is the control."""
    if not results:
        raise ValueError("plot_layer_transitions needs at least one model's results")
    fig, axes = _figure(ncols=2, width=5.6)
    panels = (("l2", "L2 distance", r"mean $\|h_{l+1} - h_l\|_2$"),
              ("cosine_degrees", "Angle (cosine similarity in degrees)",
               r"mean angle between $h_l$ and $h_{l+1}$ (degrees)"))
    for ax, (key, title, ylabel) in zip(axes[0], panels):
        for name, r in results.items():
            layers = range(1, len(r[key]) + 1)
            ax.plot(layers, r[key], marker="o", label=name,
                    linestyle="--" if "untrained" in name else "-")
        ax.set_xlabel(r"layer $l$ (input $h_l$, output $h_{l+1}$)")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.set_xticks(list(range(1, max(len(r[key]) for r in results.values()) + 1)))
    axes[0][0].legend()
    fig.suptitle("Input vs output of each layer (ALBERT Fig. 1); mean over non-padding tokens")
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


def plot_convergence(histories, x="step", y="loss", window=10, eval_y=None):
    """Training curves: ``y`` against ``x`` ("step" or "wall_clock", seconds) for each run.

    ``histories``: name -> the rows ``Trainer.train()`` returns (or ``read_history`` reads back).
    Each curve is drawn raw (faint) and as a trailing moving average over ``window`` steps
    (solid), as the title says. Held-out values ``eval_y`` (default "eval_" + y, e.g. "eval_loss")
    are drawn as markers where the rows have them; pass e.g. ``y="mlm_loss",
    eval_y="eval_mlm_loss"`` where the held-out metric has another name."""
    if not histories:
        raise ValueError("plot_convergence needs at least one history")
    eval_y = eval_y or f"eval_{y}"
    fig, axes = _figure(width=7.0)
    ax = axes[0][0]
    for i, (name, rows) in enumerate(histories.items()):
        rows = [row for row in rows if x in row and y in row]
        if not rows:
            raise ValueError(f"plot_convergence: the history of {name!r} has no rows with both "
                             f"{x!r} and {y!r}")
        color = f"C{i % 10}"
        xs, ys = [row[x] for row in rows], [row[y] for row in rows]
        ax.plot(xs, ys, color=color, alpha=0.25, linewidth=0.8)
        ax.plot(xs, moving_average(ys, window), color=color, label=name)
        evals = [(row[x], row[eval_y]) for row in rows if eval_y in row]
        if evals:
            ax.plot(*zip(*evals), color=color, marker="o", linestyle="none",
                    label=f"{name}: held-out {eval_y[5:] if eval_y.startswith('eval_') else eval_y}")
    ax.set_xlabel(_X_LABELS.get(x, x))
    ax.set_ylabel(y.replace("_", " ") + (" (cross-entropy, nats)" if y.endswith("loss") else ""))
    ax.set_title(f"Training {y.replace('_', ' ')} against {_X_LABELS.get(x, x)}\n"
                 f"(moving average over {window} steps; raw values faint; markers: held-out)")
    ax.legend(fontsize=8)
    return fig


# --- memory and time ---------------------------------------------------------------------------
def plot_memory(rows):
    """Stacked bars of the memory of one training step per configuration, in MiB: parameters,
    gradients, optimizer state, activations. ``rows``: (label, ``memory.memory_breakdown(...)``)
    pairs; the rows of ``memory.depth_sweep`` carry the same keys: ``[(r["name"], r) for r in ...]``."""
    rows = list(rows)
    if not rows:
        raise ValueError("plot_memory needs at least one (label, breakdown) row")
    fig, axes = _figure(width=max(6.4, 0.8 * len(rows) + 2.5))
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


def plot_step_time(depths, series):
    """Seconds per training step (left) and per inference forward pass (right) against depth N,
    one line per strategy. ``series``: name -> one ``memory.step_time(...)`` result ({"train": s,
    "inference": s}) per depth; ``memory.depth_sweep`` returns exactly that shape."""
    if not series:
        raise ValueError("plot_step_time needs at least one series")
    fig, axes = _figure(ncols=2, width=5.2)
    panels = (("train", "Training step (forward + backward + update)"),
              ("inference", "Inference (forward, no graph)"))
    for ax, (key, title) in zip(axes[0], panels):
        for name, times in series.items():
            ax.plot(depths, [t[key] for t in times], marker="o", label=name)
        ax.set_xlabel(_X_LABELS["depth"])
        ax.set_ylabel("seconds (median)")
        ax.set_ylim(bottom=0)
        ax.set_title(title)
    axes[0][0].legend()
    fig.suptitle("Time against depth: shared and not-shared models compute the same")
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
    fig, axes = _figure(nrows, ncols, width=3.6, height=1.6 + 0.35 * tallest)
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
    fig, axes = _figure(ncols=2, width=4.2, height=4.8)
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
