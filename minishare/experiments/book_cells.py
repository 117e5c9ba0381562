"""The cells of the book's "what the papers report against what we measured" tables, which each
experiment fills in (``book_tables``, see ``experiment``): numbers read from a committed result,
as text, and "not in this run" where the result lacks what a cell reads (the result files change
shape as the experiments grow, and an old one must not break the book)."""
from minishare import data
from minishare.experiments import stats

MISSING = "not in this run"


class Missing(Exception):
    """A cell asked for something this run's result does not hold."""


def get(obj, *path):
    """``obj[path[0]][path[1]]...``, or ``Missing``."""
    for key in path:
        try:
            obj = obj[key]
        except (KeyError, IndexError, TypeError):
            raise Missing(path) from None
    return obj


def num(x, digits=3):
    """A spread over seeds (mean ± std (min–max)) or a single number, as text."""
    if isinstance(x, dict) and "mean" in x:
        return stats.fmt(x, digits)
    if isinstance(x, (int, float)):
        return f"{x:,}" if isinstance(x, int) else f"{x:.{digits}f}"
    raise Missing(x)


def pct(x):
    """An accuracy (a fraction, or a spread of fractions) in percent."""
    if isinstance(x, dict) and "mean" in x:
        scaled = {**x, **{k: 100 * x[k] for k in ("mean", "std", "min", "max")}}
        return stats.fmt(scaled, 1) + " %"
    if isinstance(x, (int, float)):
        return f"{100 * x:.1f} %"
    raise Missing(x)


def cell(fn):
    """``fn()``, or "not in this run" when the result lacks what it reads."""
    try:
        return fn()
    except (Missing, KeyError, IndexError, TypeError, ValueError, ZeroDivisionError, StopIteration):
        return MISSING


def markdown_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in row) + " |" for row in rows]
    return "\n".join(out)


def source_line(experiment, settings, counted=False):
    """The sentence under a table that says where its numbers come from: a count needs no seeds.
    ``settings``: the result's saved settings (its cache key)."""
    where = f"`book/figures/{experiment}/result.json`"
    if counted:
        return f"Counted from the configurations by the reproduction ({where})."
    seeds = settings.get("seeds")
    run = "the reproduction's quick run" if settings.get("quick") else "the reproduction"
    over = f", over seeds {', '.join(map(str, seeds))}" if seeds else ""
    return f"Measured by {run}{over} ({where}). {made_before(settings)}".rstrip()


def claims_table(experiment, rows, result, settings):
    """A table of (claim, the paper reports, we measured) from ``rows``: (claim, paper,
    measure(result)) triples, with its source line."""
    cells = [(claim, paper, cell(lambda f=measure: f(result))) for claim, paper, measure in rows]
    return markdown_table(("claim", "the paper reports", "we measured"), cells) + "\n\n" + \
        source_line(experiment, settings) + "\n"


def not_run(experiment):
    """What a table says when its experiment has not run in this checkout."""
    return (f"*The reproduction has not run the experiment `{experiment}` in this checkout: "
            f"`python -m minishare reproduce --only {experiment}` makes it.*\n")


def made_before(saved_key):
    """One sentence saying that a result was made by an older data pipeline, and what changed
    since; "" for a result of this pipeline."""
    old = saved_key.get("data_pipeline", 1)
    if old >= data.PIPELINE_VERSION:
        return ""
    changes = "; ".join(data.PIPELINE_CHANGES.get(v, f"version {v}") for v in range(old + 1, data.PIPELINE_VERSION + 1))
    return (f"Made by data pipeline {old}, before version {data.PIPELINE_VERSION} ({changes}): the full "
            "reproduction has to run again to show this library's numbers.")
