"""Memory and time of a training step (``memory.memory_breakdown``, ``memory.depth_sweep``): sharing
shrinks what is stored per parameter, not the activations or the compute."""
from minishare.analysis.figure_style import book_figure, new_figure, series_style, wrapped

MIB = 2 ** 20
_MEMORY_PARTS = (("parameters", "parameters"), ("gradients", "gradients"),
                 ("optimizer", "optimizer state"), ("activations", "activations"))


@book_figure
def plot_memory(rows):
    """Stacked bars of the memory of one training step per configuration, in MiB: parameters,
    gradients, optimizer state, activations. ``rows``: (label, ``memory.memory_breakdown(...)``)
    pairs; the rows of ``memory.depth_sweep`` carry the same keys: ``[(r["name"], r) for r in ...]``."""
    rows = list(rows)
    if not rows:
        raise ValueError("plot_memory needs at least one (label, breakdown) row")
    fig, axes = new_figure(height=5.0)
    ax, x = axes[0][0], range(len(rows))
    bottom = [0.0] * len(rows)
    for key, label in _MEMORY_PARTS:
        heights = [breakdown[key] / MIB for _, breakdown in rows]
        bars = ax.bar(list(x), heights, 0.6, bottom=bottom, label=label)
        bottom = [b + h for b, h in zip(bottom, heights)]
    ax.bar_label(bars, labels=[f"{b:.2f}" for b in bottom], fontsize="small")   # totals on top
    ax.set_xticks(list(x))
    ax.set_xticklabels([str(label) for label, _ in rows], rotation=30, ha="right")
    ax.set_xlabel("configuration")
    ax.set_ylabel("memory (MiB)")
    ax.set_title("Memory of one training step: sharing shrinks weights, gradients and\n"
                 "optimizer state, not activations (total on top)")
    ax.margins(y=0.1)                                    # room for the totals
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=len(_MEMORY_PARTS))
    return fig


@book_figure
def plot_step_time(depths, series, ylabel="seconds (median)"):
    """Seconds per training step (left) and per inference forward pass (right) against depth N,
    one line per strategy, each with its own line style and marker. ``series``: name -> one
    ``memory.step_time(...)`` result ({"train": s, "inference": s}) per depth; ``memory.depth_sweep``
    returns exactly that shape. Entries that also carry "train_range" / "inference_range" (low,
    high), e.g. the min and max over timing rounds, get a band."""
    if not series:
        raise ValueError("plot_step_time needs at least one series")
    fig, axes = new_figure(ncols=2, height=4.4)
    panels = (("train", "Training step\n(forward + backward + update)"),
              ("inference", "Inference\n(forward, no graph)"))
    for ax, (key, title) in zip(axes[0], panels):
        for k, (name, times) in enumerate(series.items()):
            style = series_style(k, len(series))
            ax.plot(depths, [t[key] for t in times], label=name, **style)
            if all(f"{key}_range" in t for t in times):
                ax.fill_between(depths, [t[f"{key}_range"][0] for t in times],
                                [t[f"{key}_range"][1] for t in times], color=style["color"], alpha=0.2, linewidth=0)
        ax.set_xlabel("layer positions N")
        ax.set_ylabel(wrapped(ylabel, 32))       # beside a half-width panel: two short lines
        ax.set_ylim(bottom=0)
        ax.set_title(title)
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="outside lower center", ncols=len(series))
    fig.suptitle("Time against depth: shared and not-shared models compute the same FLOPs")
    return fig
