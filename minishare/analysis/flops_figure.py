"""FLOPs per token (``flops.preset_table``) against parameters, and measured step time against
counted FLOPs: sharing cuts parameters, not compute."""
from minishare.analysis.figure_style import book_figure, new_figure


@book_figure
def plot_flops(presets, check=None, seq_len=512, check_batch=None):
    """Left: forward FLOPs per token against parameters, one labelled point per preset (rows of
    ``flops.preset_table``), log-log. Right (with ``check``, the rows of the "flops" experiment):
    measured CPU seconds per training step against training FLOPs per step for tiny models, the
    median with the min–max range over rounds, and the line time ∝ FLOPs through the smallest."""
    from matplotlib.ticker import FormatStrFormatter
    if not presets:
        raise ValueError("plot_flops needs at least one preset row")
    fig, axes = new_figure(ncols=2 if check else 1, height=4.8)
    ax = axes[0][0]
    markers = "osD^v<>"
    for i, r in enumerate(presets):
        ax.plot(r["parameters"] / 1e6, r["forward_gflops"], marker=markers[i % len(markers)],
                linestyle="none", color=f"C{i}", markersize=8, label=r["name"])
        ax.annotate(r["name"], (r["parameters"] / 1e6, r["forward_gflops"]), xytext=(6, -3),
                    textcoords="offset points", fontsize="small")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("parameters (millions, log scale)")
    ax.set_ylabel(f"forward GFLOPs per token at T = {seq_len} (log scale)")
    ax.set_title("Compute against parameters\n(ALBERT Table 1's models):\nsharing cuts parameters, not FLOPs")
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
            ax.annotate(r["name"], (xi, yi), xytext=(6, -10), textcoords="offset points", fontsize="small")
        span = [min(x) * 0.8, max(x) * 1.25]
        ax.plot(span, [med[0] * s / x[0] for s in span], linestyle="--", color="gray",
                label="time ∝ FLOPs (through the smallest)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        batch = f",\nbatch {check_batch[0]} × {check_batch[1]} tokens" if check_batch else ""
        ax.set_xlabel(f"training GFLOPs per step (3 × forward{batch})")
        ax.set_ylabel("CPU seconds per training step (log scale)")
        ax.set_title("Measured step time against FLOPs\n(tiny ALBERTs, E = 32, FFN 4H,\nPost-LN)")
        ax.legend(loc="upper left", fontsize="small")
    for ax in axes[0]:
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_formatter(FormatStrFormatter("%g"))
            axis.set_minor_formatter(FormatStrFormatter(""))
    return fig
