"""What data-parallel training sends per step (the "communication" experiment): the bytes of a
ring Allreduce of the gradients by sharing variant and number of ranks, and a step's measured
compute against its Allreduce."""
import statistics

from minishare.analysis.figure_style import book_figure, new_figure, wrapped


@book_figure
def plot_communication(counted, ring, timed=None, title_shape=""):
    """Left: megabytes each rank sends per data-parallel step (a ring Allreduce of the float32
    gradients) against the number of ranks K, one bar per sharing variant. ``counted``: {variant:
    {"bytes", ...}}; ``ring``: {variant: {str(K): bytes}}. Right (when ``timed`` is given): seconds
    of a step's compute and of its Allreduce against the bytes the step sends, on log-log axes, one
    point per variant (median, bars min–max over rounds), with the line of slope 1 (time
    proportional to the bytes) through the largest Allreduce. ``timed``: {"buffer_bytes": {variant: bytes}, "times": {variant:
    {"compute_wall": [s, ...], "allreduce_wall": [...]}}}."""
    variants = list(counted)
    if not variants:
        raise ValueError("plot_communication needs at least one variant")
    fig, axes = new_figure(ncols=2 if timed else 1, height=5.0)
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
    ax.set_title("ALBERT-base shape, counted:\nring Allreduce of the gradients,\n"
                 "2 (K − 1) / K × 4 bytes × distinct parameters")
    ax.set_ylim(top=1.4 * max(ring[name][str(K)] for name in variants for K in Ks) / 1e6)   # room for
    ax.legend(fontsize="small", ncols=2, loc="upper left")                                 # the legend
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
                                va="bottom" if above else "top", fontsize="small")
            if key == "allreduce_wall":      # slope 1 on log-log axes, through the largest buffer
                top = max(range(len(mb)), key=lambda i: mb[i])
                low = min(mb) / 1.5
                ax.plot([low, mb[top]], [med[top] * low / mb[top], med[top]], "k:", linewidth=1,
                        label="proportional to the bytes")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(min(mb) / 1.6, max(mb) * 1.6)
        ax.set_ylim(ax.get_ylim()[0] / 4, ax.get_ylim()[1] * 2)     # room for the legend below, the names above
        ax.set_xlabel("MB (10⁶ bytes) the step's\nAllreduce sends (log scale)")
        ax.set_ylabel("seconds per step\n(log scale; median, min–max bars)")
        ax.set_title(wrapped(f"Timed ({title_shape}): compute against Allreduce", 36))
        ax.legend(fontsize="small", loc="lower right")
    return fig
