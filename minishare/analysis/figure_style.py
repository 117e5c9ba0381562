"""The one style of the course's figures: their width, their font scale, the look of each series,
and how a figure is made and saved.

The book shows every figure at the width of its text column (about 800 pixels,
``book/_static/book.css``), a notebook at 100 dpi, so a figure is drawn ``WIDTH`` inches wide,
whatever its number of panels: then ``FONT_SIZE`` points come out the same size in every figure,
about as large as the book's captions. A figure that needs room grows taller, never wider, and a
long legend goes below the panels, not beside them.

A figure is a ``matplotlib.figure.Figure`` built without pyplot (``new_figure``), so a script that
draws many keeps no windows open; in a notebook, display one by evaluating it. A function that
draws one is decorated with ``book_figure``, which sets ``STYLE`` while it runs: matplotlib fixes
a text's size when the text is made. ``save_figure`` writes PNG (notebooks, README) and SVG (the
book). matplotlib is imported inside the functions: ``import minishare`` needs NumPy alone.
"""
import functools
import os
import textwrap

from minishare.errors import MissingPackage
from minishare.files import atomic_write

WIDTH = 8.0            # inches: the text column
FONT_SIZE = 11         # points, at WIDTH
STYLE = {"font.size": FONT_SIZE, "axes.titlesize": FONT_SIZE, "axes.labelsize": FONT_SIZE,
         "figure.titlesize": FONT_SIZE + 1, "xtick.labelsize": FONT_SIZE - 1,
         "ytick.labelsize": FONT_SIZE - 1, "legend.fontsize": FONT_SIZE - 1}
# Line styles and markers cycle independently of colour, so series stay apart in greyscale print
# and where one curve lies on top of another.
LINE_STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def book_figure(draw):
    """Decorator: ``draw`` makes its figure's text in the book's ``STYLE``."""
    @functools.wraps(draw)
    def drawn(*args, **kwargs):
        try:
            import matplotlib
        except ImportError as error:
            raise MissingPackage("minishare's figures need matplotlib: pip install matplotlib") from error
        with matplotlib.rc_context(STYLE):
            return draw(*args, **kwargs)
    return drawn


def new_figure(nrows=1, ncols=1, height=4.4):
    """A pyplot-free Figure ``WIDTH`` inches wide with a grid of Axes (always 2-D:
    axes[row][col]); ``height`` is inches per row of panels."""
    try:
        from matplotlib.figure import Figure
    except ImportError as error:
        raise MissingPackage("minishare's figures need matplotlib: pip install matplotlib") from error
    fig = Figure(figsize=(WIDTH, height * nrows), layout="constrained")
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


def wrapped(text, width=85):
    """``text`` broken into lines of at most ``width`` characters at spaces (not inside names such
    as "shared-attention"), keeping the line breaks it has: centred over a figure or a panel, one
    long line would run off its edges."""
    return "\n".join(textwrap.fill(line, width, break_on_hyphens=False) for line in text.split("\n"))


def series_style(i, n=1):
    """Colour, line style, marker and marker size of series ``i`` of ``n`` in a figure. Earlier
    series get larger markers, so a later one drawn on the same point sits inside it and both show."""
    return dict(color=f"C{i % 10}", linestyle=LINE_STYLES[i % len(LINE_STYLES)], marker=MARKERS[i % len(MARKERS)],
                markersize=4 + 4 * (n - 1 - i) / max(1, n - 1))


def band(curves):
    """Mean, min and max, point by point, of equally long curves (one per seed). The mean is
    clamped into [min, max]: the rounded sum of equal values can land one ulp outside them, and an
    error bar of negative length is refused by matplotlib."""
    columns = list(zip(*curves))
    low, high = [min(c) for c in columns], [max(c) for c in columns]
    mean = [min(max(sum(c) / len(c), lo), hi) for c, lo, hi in zip(columns, low, high)]
    return mean, low, high
