"""What every notebook of the course needs besides the library: the quick/full switch and the
committed results of the full reproduction.

One environment variable chooses the mode, so CI and a student run the same notebooks:

    MINISHARE_QUICK=1   quick: tiny models, a few dozen steps (CI: under a minute per notebook on
                        2 CPU cores); the numbers show the mechanics, not the papers' effects
    (unset, or 0)       full: the settings of ``python -m minishare reproduce``; where that would
                        train for long, the notebook loads the committed results of that run from
                        ``book/figures/<experiment>/result.json`` instead, and says so

    from minishare.experiments import course
    print(course.setup())                   # figures display inline; says which mode this is
    steps = course.pick(quick=30, full=300)
    result = course.committed_result("albert_sharing")
"""
import dataclasses
import inspect
import json
import os
import shutil
import tempfile

ENV = "MINISHARE_QUICK"
# book/figures/ of this checkout: the package sits at the root of the repository (pip install -e .)
FIGURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "book", "figures")


def is_quick():
    """True when ``MINISHARE_QUICK`` is set to anything but "" or "0"."""
    return os.environ.get(ENV, "") not in ("", "0")


def pick(quick, full):
    """``quick`` in quick mode, ``full`` otherwise: one line per setting that differs."""
    return quick if is_quick() else full


def settings():
    """The ``reproduce`` settings of this mode (``experiments.settings.QUICK`` or ``FULL``)."""
    from minishare.experiments.settings import FULL, QUICK
    return QUICK if is_quick() else FULL


def setup():
    """The first cell of every notebook: make the library's figures (pyplot-free matplotlib
    Figures) display when they end a cell, as ``%matplotlib inline`` does, and plans and configs
    too (``analysis.display.register_formatters``), and return the line that says which mode this
    is. Outside IPython only the line is returned."""
    try:
        from IPython import get_ipython
    except ImportError:
        return banner()
    shell = get_ipython()
    if shell is not None:
        from minishare.analysis.display import register_formatters
        shell.run_line_magic("matplotlib", "inline")
        register_formatters(shell)
    return banner()


def banner():
    """One line that tells the reader which mode the notebook runs in and what that means."""
    if is_quick():
        return (f"Quick mode ({ENV}=1), a smoke test: tiny models and few steps show the code at work; their "
                "numbers are not results (the full run's are in book/figures, and the book shows them).")
    return f"Full mode: the full reproduction's settings; long trainings are loaded from {FIGURES}."


def scratch(name, fresh=False):
    """A folder for a notebook's training outputs, outside the repository (under the system's
    temporary directory), so running the course leaves the checkout clean. ``fresh`` empties it
    first: a notebook then trains what it shows instead of finding another run's cache."""
    path = os.path.join(tempfile.gettempdir(), "minishare-notebooks", name)
    if fresh:
        shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path, exist_ok=True)
    return path


def experiment(name, notebook, progress=True, **quick_overrides):
    """The result of the ``reproduce`` experiment ``name`` in this mode, as its ``result.json``
    holds it (so ``module.figures``, ``report`` and ``observations`` take it as they are).

    quick: the experiment runs now, in a fresh scratch folder of ``notebook``, with the quick
           settings of ``reproduce`` changed by ``quick_overrides`` (fields of ``Settings``, e.g.
           fewer steps so the notebook stays under a minute); training shows progress bars.
    full:  the committed result of the full run (``committed_result``): the full settings train
           for many minutes, so the notebook reads what ``python -m minishare reproduce`` wrote.

    The line printed says which of the two happened."""
    from minishare.experiments import registry
    from minishare.experiments.book_cells import made_before
    from minishare.experiments.experiment import key_matches
    from minishare.experiments.settings import FULL, QUICK
    experiment = registry.get(name)
    if not is_quick():
        path = os.path.join(FIGURES, name, "result.json")
        committed = committed_result(name, with_settings=True)
        if not key_matches(committed["settings"], experiment.settings(FULL), older_data=True) \
                and not made_before(committed["settings"]):       # (older data: says so below)
            raise ValueError(
                f"{path} was made with other settings than this library's full run (an older "
                f"reproduction): run `python -m minishare reproduce --out book/figures --only {name}` "
                f"to redo it, or set {ENV}=1 to train the tiny version here")
        print(f"Full mode: loading the committed results of the full run, {path} (the settings of `reproduce`). "
              + made_before(committed["settings"]))
        return committed["result"]
    settings = dataclasses.replace(QUICK, **quick_overrides)
    print(f"Quick mode, a smoke test: training the '{name}' experiment now on tiny settings "
          f"({len(settings.seeds)} seeds); what it prints is not a result. Full mode loads the full run.")
    result = experiment.run(scratch(notebook, fresh=True), experiment.settings(settings), progress=progress)
    return json.loads(json.dumps(result))     # as result.json stores it: tuples become lists


def committed_result(name, folder=None, with_settings=False):
    """The ``result`` of experiment ``name`` as the full ``reproduce`` run committed it
    (``book/figures/<name>/result.json``); with ``with_settings``, the whole file: {"settings",
    "result"}. Raises FileNotFoundError naming the file and the command that makes it."""
    path = os.path.join(folder or FIGURES, name, "result.json")
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"no committed result for experiment {name!r} at {path}; run "
            f"`python -m minishare reproduce --out book/figures --only {name}` (or set {ENV}=1 "
            "to train the tiny version in the notebook)")
    with open(path) as f:
        saved = json.load(f)
    if not isinstance(saved, dict) or "result" not in saved:
        raise ValueError(f"{path} is not a reproduce result (no 'result' key)")
    return saved if with_settings else saved["result"]


def committed_figure(name, filename, folder=None):
    """Path of a PNG the full run committed (``book/figures/<name>/<filename>``), for
    ``IPython.display.Image``; FileNotFoundError names the file when it is missing."""
    path = os.path.join(folder or FIGURES, name, filename)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no committed figure {path}; run `python -m minishare reproduce "
                                f"--out book/figures --only {name}`")
    return path


class Source:
    """The source of a library function or class, shown in a notebook as a highlighted code block
    headed by its file and line: the cell shows the code that runs, never a copy of it."""

    def __init__(self, obj):
        self.text = inspect.getsource(obj)
        root = os.path.dirname(os.path.dirname(FIGURES))
        path = os.path.relpath(inspect.getsourcefile(obj), root)
        self.where = f"{path}, line {inspect.getsourcelines(obj)[1]}"

    def _repr_markdown_(self):
        return f"`{self.where}`\n\n```python\n{self.text}```"

    def __repr__(self):
        return f"# {self.where}\n{self.text}"


def reveal(guess, actual, what="the value"):
    """The end-of-notebook questions: the student writes a prediction into ``guess`` and runs the
    cell; only then is the computed value shown, beside the prediction. With no prediction yet the
    value stays hidden, so reading the notebook top to bottom does not give the answer away."""
    if guess is None:
        return f"{what}: hidden until you write your prediction into `guess` and run this cell again"
    if isinstance(actual, str) or isinstance(guess, str):
        return f"{what}: {actual!r}; your prediction {guess!r} is {'right' if guess == actual else 'not it'}"
    off = abs(guess - actual) / abs(actual) if actual else abs(guess)
    return f"{what}: {actual!r}; your prediction {guess!r} is off by {off:.0%}"


def show_experiment(name, result, notebook):
    """Display what ``reproduce`` reports for experiment ``name``: its figures (drawn by the
    experiment's own ``figures`` into the notebook's scratch folder and shown as PNG), its table
    and what it shows (``what_this_run_shows``). Needs IPython."""
    from IPython.display import Image, Markdown, display

    from minishare.experiments import registry
    experiment = registry.get(name)
    figures = experiment.figures(result, scratch(os.path.join(notebook, "figures")))
    for caption, paths in figures:
        display(Markdown(f"**{caption}**"), Image(filename=next(p for p in paths if p.endswith(".png"))))
    display(Markdown(experiment.report(result, figures)))
    display(Markdown(what_this_run_shows(name, result)))


def what_this_run_shows(name, result):
    """Markdown: the experiment's no-model baselines, its observations and its comparisons, as the
    ledger states them. Full mode reads the committed ledger (``book/figures/claims.json``, the
    sentences the book prints); quick mode decides the claims of ``result`` here, by the same rule
    (``reproduce.ledger_of``: paired by seed, Holm over the primary comparisons)."""
    from minishare.experiments import claims, registry, reproduce
    experiment = registry.get(name)
    if is_quick():
        found = reproduce.ledger_of(experiment, result, settings())
    else:
        ledger = claims.load(os.path.join(FIGURES, "claims.json"))
        found = {key: [x for x in ledger[key] if x["experiment"] == name] for key in ("claims", "baselines")}
    notes = experiment.observations(result) + [c["statement"] for c in found["claims"]]
    lines = [claims.baseline_line(found["baselines"]), ""] if found["baselines"] else []
    return "\n".join(lines + ["What this run shows:", ""] + [f"- {note}" for note in notes])
