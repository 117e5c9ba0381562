"""How objects draw themselves in a notebook: a sharing ``Plan`` as SVG (``plan_svg``), a model
config as a table of where its parameters go (``config_html``). The kernel's classes know nothing
of this: ``register_formatters`` tells IPython's display formatters to call these functions for
them, and runs when ``minishare.analysis`` is imported inside IPython (and in ``course.setup()``,
the first cell of every notebook). Then a plan or a config that ends a cell is drawn.

Plain strings, no plotting library, and no IPython import: the SVG is small enough to diff, and
outside IPython nothing happens. Every string that comes from the user (a plan's name) is escaped.
"""
import sys
from html import escape

# One colour per parameter set (Tableau 10): set A is blue wherever it appears, so a Cycle plan
# shows as repeating colours and Cycle (rev) as a mirrored band.
SET_COLORS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
              "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")
_BOX_W, _BOX_H, _GAP, _LEFT, _TOP = 96, 20, 3, 74, 58


def plan_svg(plan):
    """The plan drawn as Takase & Kiyono draw theirs (Figure 1): for each component a column of N
    boxes, the first layer at the bottom, each box labelled and coloured by the parameter set it
    uses. Components that agree are drawn once ("every component")."""
    from minishare.sharing import COMPONENTS, label
    shown = plan.shown_components()
    N = plan.n_layers
    width = _LEFT + len(shown) * (_BOX_W + 12) + 8
    height = _TOP + N * (_BOX_H + _GAP) + 18
    sets = {c: plan.n_sets(c or COMPONENTS[0]) for c in shown}
    counts = ", ".join(f"{c or 'every component'}: {m} set{'s' * (m != 1)}" for c, m in sets.items())
    title = f"{plan.name}: N = {N} positions; {counts}"
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f"<title>{escape(title)}</title>",
           f'<text x="4" y="16" font-weight="bold">{escape(plan.name)} (N = {N})</text>',
           f'<text x="4" y="32" font-size="10" fill="#555">{escape(counts)}</text>']
    for col, component in enumerate(shown):
        x = _LEFT + col * (_BOX_W + 12)
        schedule = plan.schedule(component or "attention")
        for position, index in enumerate(schedule):
            y = _TOP + (N - 1 - position) * (_BOX_H + _GAP)       # position 0 at the bottom
            color = SET_COLORS[index % len(SET_COLORS)]
            out.append(f'<rect x="{x}" y="{y}" width="{_BOX_W}" height="{_BOX_H}" rx="3" '
                       f'fill="{color}"><title>position {position}: set {label(index)}</title></rect>')
            out.append(f'<text x="{x + _BOX_W / 2}" y="{y + 14}" text-anchor="middle" '
                       f'fill="white" font-weight="bold">{label(index)}</text>')
        out.append(f'<text x="{x + _BOX_W / 2}" y="{_TOP - 6}" text-anchor="middle">'
                   f"{escape(component or 'every component')}</text>")
    for position in range(N):
        y = _TOP + (N - 1 - position) * (_BOX_H + _GAP) + 14
        out.append(f'<text x="{_LEFT - 6}" y="{y}" text-anchor="end" fill="#555">'
                   f"position {position}</text>")
    out.append(f'<text x="4" y="{height - 4}" font-size="10" fill="#555">first layer at the bottom</text>')
    out.append("</svg>")
    return "\n".join(out)


def _stack_groups(model):
    """(group, parameters, distinct sets or None) rows of an encoder-decoder or LM, each shared
    tensor once, in the order the input meets them: the word embeddings (V × E), the E -> H
    projection, each component of each stack (with its number of distinct sets), the output
    projection's own weights (none when tied and E = H)."""
    groups, sets = {}, {}
    for name, p in model.named_parameters():
        parts = name.split(".")
        if parts[0] == "embeddings":
            group = "word embeddings (V × E)" if parts[1] == "word_embeddings" else "E → H projection"
        elif parts[1].endswith("_sets"):
            group = f"{parts[0]} {parts[1][:-len('_sets')].replace('_', '-')}"
            sets.setdefault(group, set()).add(parts[2])
        elif parts[0] in ("encoder", "decoder"):
            group = f"{parts[0]} final LayerNorm"
        else:
            group = "output projection"
        groups[group] = groups.get(group, 0) + p.size
    return [(g, n, len(sets[g]) if g in sets else None) for g, n in groups.items()]


def _albert_groups(config, model):
    """The same rows for ALBERT/BERT, from ``params.parameter_breakdown`` (parts that are 0 left
    out), with the number of distinct attention and FFN sets from the plan."""
    from minishare.analysis.params import parameter_breakdown
    plan = config.plan()
    n_sets = {"attention": plan.n_sets("attention"), "FFN": plan.n_sets("ffn")}
    return [(f"{group}: {part}", n, n_sets.get(part)) for group, parts in parameter_breakdown(model).items()
            for part, n in parts.items() if n]


def config_html(config):
    """A config as HTML: its shape (V, E, H, N, M), its plan, and where its parameters go, counted
    shape-only (nothing allocated), each shared tensor once, as ``count_parameters`` counts it
    (an ALBERT config: the encoder with its pooler, as the papers count)."""
    from minishare.models import AlbertConfig
    from minishare.params import build_shape_only
    model = build_shape_only(config)
    rows = _albert_groups(config, model) if isinstance(config, AlbertConfig) else _stack_groups(model)
    total = sum(n for _, n, _ in rows)
    plan = config.plan()
    M = config.num_unique_layers
    shape = (f"V = {config.vocab_size:,}, E = {config.embedding_size}, H = {config.hidden_size}, "
             f"N = {config.num_hidden_layers}" + (f", M = {M}" if M is not None else "") +
             f", {config.norm_position}-LN, sharing = {escape(str(plan.name))}")
    body = "".join(f"<tr><td style='text-align:left'>{escape(group)}"
                   + ("" if sets is None else f" ({sets} set{'s' * (sets != 1)})")
                   + f"</td><td style='text-align:right'>{n:,}</td>"
                   f"<td style='text-align:right'>{100 * n / total:.1f}%</td></tr>" for group, n, sets in rows)
    plan_text = escape(str(plan)).replace("\n", "<br>")
    return (f"<div><b>{type(config).__name__}</b>: {shape}<br>"
            f"plan (first layer left): <code>{plan_text}</code>"
            "<table><thead><tr><th>group</th><th>parameters</th><th>share</th></tr></thead>"
            f"<tbody>{body}<tr><td><b>total</b></td><td style='text-align:right'><b>{total:,}</b>"
            "</td><td style='text-align:right'>100%</td></tr></tbody></table></div>")


def running_shell():
    """The running IPython shell, or None: outside IPython (IPython not imported, or imported but
    no shell started), without importing IPython."""
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    return get_ipython() if get_ipython is not None else None


def register_formatters(shell=None):
    """Make ``shell`` (by default the running IPython shell) draw a ``Plan`` as ``plan_svg`` and an
    ``AlbertConfig`` or ``TransformerConfig`` as ``config_html`` when one is shown (the last
    expression of a cell, or ``display``). Returns whether a shell was there to register with;
    registering twice is harmless."""
    shell = running_shell() if shell is None else shell
    if shell is None:
        return False
    from minishare.models.config import AlbertConfig, TransformerConfig
    from minishare.sharing import Plan
    formatters = shell.display_formatter.formatters
    formatters["image/svg+xml"].for_type(Plan, plan_svg)
    for config in (AlbertConfig, TransformerConfig):
        formatters["text/html"].for_type(config, config_html)
    return True


def plan_explorer(n_layers=6, n_unique=3, strategy="cycle-rev", max_layers=24):
    """Sliders for N and M and a menu of strategies, the plan redrawn as they move (needs
    ipywidgets, which is optional). Without ipywidgets, returns the plan for the given values
    (drawn, in IPython, by ``register_formatters``) and prints how to get the widget. Strategies whose M follows from N
    (ALBERT's, the sandwich, ...) ignore M; a rule the strategy cannot follow (Sequence with M not
    dividing N) shows the library's error message."""
    from minishare.sharing import STRATEGIES, TAKES_N_UNIQUE, Plan

    def build(N, M, name):
        return Plan.build(name, N, M if name in TAKES_N_UNIQUE else None)

    try:
        import ipywidgets as widgets
        from IPython.display import display
    except ImportError:
        print("(ipywidgets is not installed: `pip install ipywidgets` for sliders; the plan for "
              f"N = {n_layers}, M = {n_unique}, {strategy} follows)")
        return build(n_layers, n_unique, strategy)
    N = widgets.IntSlider(value=n_layers, min=1, max=max_layers, description="N positions")
    M = widgets.IntSlider(value=n_unique, min=1, max=n_layers, description="M sets")
    name = widgets.Dropdown(options=STRATEGIES, value=strategy, description="strategy")
    out = widgets.Output()

    def redraw(_=None):
        M.max = N.value
        with out:
            out.clear_output(wait=True)
            try:
                display(build(N.value, M.value, name.value))
            except ValueError as error:
                print(error)
    for control in (N, M, name):
        control.observe(redraw, names="value")
    redraw()
    return widgets.VBox([widgets.HBox([N, M, name]), out])
