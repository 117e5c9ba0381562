"""The parts of the book that are generated at build time, so that the book shows what exists in
the checkout and never a hand-typed copy of it:

- ``notebooks/NN_topic.ipynb``: the course notebooks (``notebooks/NN_topic.py``, jupytext's
  py:percent format) turned into notebooks without outputs, which myst-nb then executes, with a
  line after the title that offers the committed ``notebooks/NN_topic.ipynb`` for download;
- ``_generated/chNN/notebooks.md``: the notebook of chapter NN (``notebooks/NN_*.py``), as a link to
  its page and a download of its committed ``.ipynb``;
- ``_generated/chNN/exercises.md``: the text of every exercise whose README says it belongs to
  chapter NN (``*Chapter NN ...*`` on its first lines), its headings moved under the chapter's;
- ``_generated/figures/<experiment>/<name>.md``: the figures of the reproduction a chapter includes
  (``all``: every figure of the experiment), with their captions from the report, or nothing when
  this run has not made them;
- ``_generated/measured/<table>.md``: "what the papers report against what we measured" tables,
  whose measured column is read from ``figures/<experiment>/result.json`` (``measured.py``);
- ``_generated/claims/<experiment>.md``: what the run shows for one experiment, the sentences of the
  ledger ``figures/claims.json`` with the experiment's no-model baselines;
- ``_generated/scorecard.md``: every primary comparison against the paper it tests (``scorecard.md``);
- ``_generated/floors.png``: the package's floors, drawn from its imports (``contributing.md``).

A chapter includes these files with MyST's ``{include}``. Each file is rewritten only when its
text changes, so Sphinx rereads only the chapters whose generated parts changed.
"""
import glob
import os
import re

import measured

BOOK = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(BOOK)
GENERATED = os.path.join(BOOK, "_generated")
FIGURES = os.path.join(BOOK, "figures")

# Notebook N belongs to chapter N (the course map): ``notebooks/NN_topic.py`` is chapter NN's notebook.
def chapter_numbers():
    """The numbers of the chapters, from their file names (``chapters/NN_topic.md``)."""
    return sorted(int(os.path.basename(p)[:2]) for p in glob.glob(os.path.join(BOOK, "chapters", "[0-9][0-9]_*.md")))


# A chapter shows the reproduction's figures by including ``_generated/figures/<experiment>/<pattern>.md``
# (pattern "all" for every figure of the experiment, else a file name without ".png"); the
# generator makes exactly the files the chapters include, found by reading them.
FIGURE_INCLUDE = re.compile(r"_generated/figures/([\w-]+)/([\w*-]+)\.md")
# ... and the ledger's sentences of an experiment by including ``_generated/claims/<experiment>.md``.
CLAIM_INCLUDE = re.compile(r"_generated/claims/([\w-]+)\.md")


def _chapter_texts():
    for chapter in sorted(glob.glob(os.path.join(BOOK, "chapters", "*.md"))):
        with open(chapter, encoding="utf-8") as f:
            yield f.read()


def write_if_changed(path, text):
    """Write ``text`` to ``path`` unless it already holds exactly that (keeps mtimes, so Sphinx
    does not reread unchanged pages)."""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


# --- notebooks -------------------------------------------------------------------------------------
def notebook_sources():
    return sorted(glob.glob(os.path.join(ROOT, "notebooks", "[0-9][0-9]_*.py")))


def _cells(notebook):
    return [(c.cell_type, c.source) for c in notebook.cells]


def convert_notebooks():
    """notebooks/NN_topic.py -> book/notebooks/NN_topic.ipynb; stale ones removed.

    A notebook that ``tests/test_notebooks.py`` has already executed in quick mode (written to
    ``$MINISHARE_NOTEBOOK_OUT``, default ``book/_build/executed/``, as CI does) is taken with its
    outputs, marked not to be executed again, provided its cells are exactly the current source's;
    any other notebook is written without outputs and myst-nb executes it (a cell that raises fails
    the build either way: the test fails first)."""
    import jupytext
    import nbformat

    out = os.path.join(BOOK, "notebooks")
    executed = os.environ.get("MINISHARE_NOTEBOOK_OUT") or os.path.join(BOOK, "_build", "executed")
    wanted = set()
    for path in notebook_sources():
        name = os.path.splitext(os.path.basename(path))[0] + ".ipynb"
        wanted.add(name)
        notebook = jupytext.read(path)
        notebook.metadata.pop("jupytext", None)
        done = os.path.join(executed, name)
        if os.path.exists(done):
            ran = nbformat.read(done, as_version=4)
            if _cells(ran) == _cells(notebook):
                ran.metadata.pop("jupytext", None)
                ran.metadata["mystnb"] = {"execution_mode": "off"}
                notebook = ran
        notebook.cells.insert(1, nbformat.v4.new_markdown_cell(
            f"**Run it yourself:** download {download(name[:-6])} (no outputs) and open it in Jupyter, VS Code "
            "or Colab; `notebooks/README.md` says how. The outputs on this page come from quick mode "
            "(`MINISHARE_QUICK=1`: tiny models and few steps), so they show how the code works, not the "
            "papers' effects."))
        write_if_changed(os.path.join(out, name), nbformat.writes(notebook) + "\n")
    for stale in glob.glob(os.path.join(out, "*.ipynb")):
        if os.path.basename(stale) not in wanted:
            os.remove(stale)
    # a page listing the notebooks in course order: the toctree of the book's notebook part
    write_if_changed(os.path.join(GENERATED, "notebooks_toctree.md"),
                     "```{toctree}\n:maxdepth: 1\n\n"
                     + "".join(f"/notebooks/{os.path.splitext(n)[0]}\n" for n in sorted(wanted)) + "```\n")


def notebook_title(path):
    """The notebook's first Markdown heading, without its leading '#'."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"#\s+#\s+(.+)", line)
            if m:
                return m.group(1).strip()
    return os.path.basename(path)


def chapter_notebooks(number):
    return [p for p in notebook_sources() if os.path.basename(p).startswith(f"{number:02d}_")]


def download(name):
    """A MyST download role for the committed ``notebooks/<name>.ipynb`` (a path from the book's
    root, so it resolves the same from a chapter, an included part and a notebook page)."""
    return f"{{download}}`{name}.ipynb </../notebooks/{name}.ipynb>`"


def notebooks_part(number):
    found = chapter_notebooks(number)
    if not found:
        raise ValueError(f"chapter {number} has no notebook notebooks/{number:02d}_*.py: notebook N belongs to chapter N")
    lines = []
    for path in found:
        name = os.path.splitext(os.path.basename(path))[0]
        lines.append(f"This chapter runs in {{doc}}`/notebooks/{name}`: its page in this book shows it run in "
                     f"quick mode (tiny models, few steps). Download {download(name)} and open it in Jupyter, "
                     "VS Code or Colab to run it yourself; `notebooks/README.md` says how.")
    return "\n\n".join(lines) + "\n"


# --- exercises -------------------------------------------------------------------------------------
def exercise_readmes():
    return sorted(glob.glob(os.path.join(ROOT, "exercises", "ex[0-9]*", "README.md")))


def exercise_chapter(path):
    """The chapter an exercise names on its first lines ("*Chapter 4 (...)"), or None."""
    with open(path, encoding="utf-8") as f:
        head = f.read(600)
    m = re.search(r"Chapter\s+(\d+)", head)
    return int(m.group(1)) if m else None


_LINK = re.compile(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)")


def _relink(text, folder):
    """Links of a README to files beside it become the file's path in the repository (as code):
    the book has no page for them, and a dead link is worse than a path."""
    def fix(m):
        label, target = m.group(1), m.group(2)
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            return m.group(0)
        path = os.path.normpath(os.path.join(folder, target.split("#")[0]))
        shown = os.path.relpath(path, ROOT)
        plain = label.strip("`")
        return f"{label} (`{shown}`)" if plain != shown and plain != target else f"`{shown}`"
    return _LINK.sub(fix, text)


def shifted(markdown, levels):
    """``markdown`` with every ATX heading ``levels`` deeper (code fences left alone)."""
    out, fence = [], None
    for line in markdown.splitlines():
        m = re.match(r"\s*(```+|~~~+)", line)
        if m:
            mark = m.group(1)
            if fence is None:
                fence = mark
            elif mark.startswith(fence):
                fence = None
        elif fence is None and re.match(r"#{1,6}\s", line):
            line = "#" * levels + line
        out.append(line)
    return "\n".join(out)


def exercises_part(number):
    found = [p for p in exercise_readmes() if exercise_chapter(p) == number]
    if not found:
        return ("This chapter has no graded exercise; the exercises and the questions at the end of its "
                "notebook are its practice.\n")
    parts = ["The texts below are the exercises' own READMEs (`exercises/exNN_topic/README.md`); "
             "each says which file to edit and how to run its tests. Teachers release and grade the "
             "exercises with `python -m minishare.grader` (see `exercises/README.md`).", ""]
    for path in found:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        parts += [shifted(_relink(text, os.path.dirname(path)), 2), ""]
    return "\n".join(parts)


# --- figures ---------------------------------------------------------------------------------------
def report_captions():
    """{"experiment/name.png": caption} from the report's ``![caption](path)`` lines."""
    path = os.path.join(FIGURES, "report.md")
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return {m.group(2): m.group(1) for m in re.finditer(r"!\[([^\]]*)\]\(([^)]+\.png)\)", f.read())}


def figure_part(experiment, pattern, captions):
    """Every figure ``experiment/pattern.png`` this run made, in the report's order, as MyST
    figures with the report's captions; empty when there is none (the chapter goes on without)."""
    order = {path: i for i, path in enumerate(captions)}
    found = sorted((os.path.relpath(p, FIGURES).replace(os.sep, "/")
                    for p in glob.glob(os.path.join(FIGURES, experiment, pattern + ".png"))),
                   key=lambda png: (order.get(png, len(order)), png))
    parts = []
    for png in found:
        caption = captions.get(png, f"The reproduction's figure `{png}`.")
        alt = caption.replace("\n", " ")
        parts.append(f"```{{figure}} /figures/{png}\n:width: 100%\n:alt: {alt}\n\n{caption} "
                     f"(`book/figures/{png}`)\n```\n")
    return "\n".join(parts)


# --- the API reference -----------------------------------------------------------------------------
def api_pages():
    """One page per module of the library (``api/generated/<module>.rst``), documenting its
    members from their docstrings; a package's page only lists its modules, since a package
    re-exports what its modules define. (Autosummary's recursion is not used: it resolves
    ``minishare.gradcheck`` and ``minishare.tensor`` to the functions the package re-exports
    under those names, not to the modules.)"""
    import pkgutil
    import minishare
    out = os.path.join(BOOK, "api", "generated")
    names = ["minishare"] + sorted(m.name for m in pkgutil.walk_packages(minishare.__path__, "minishare.")
                                   if not m.name.rsplit(".", 1)[-1].startswith("_"))
    wanted = set()
    for name in names:
        is_package = os.path.isdir(os.path.join(ROOT, *name.split(".")))
        options = "   :no-members:\n" if is_package else "   :members:\n   :undoc-members:\n"
        text = f"{name}\n{'=' * len(name)}\n\n.. automodule:: {name}\n{options}"
        if is_package:
            children = [n for n in names if n.startswith(name + ".") and "." not in n[len(name) + 1:]]
            text += "\n.. toctree::\n   :maxdepth: 1\n\n" + "".join(f"   {c}\n" for c in children)
        path = os.path.join(out, f"{name}.rst")
        write_if_changed(path, text)
        wanted.add(path)
    for stale in glob.glob(os.path.join(out, "*.rst")):
        if stale not in wanted:
            os.remove(stale)


# --- the hook --------------------------------------------------------------------------------------
def generate(app, config):
    convert_notebooks()
    api_pages()
    captions = report_captions()
    wanted = {os.path.join(GENERATED, "notebooks_toctree.md")}
    for number in chapter_numbers():
        for part, text in (("notebooks", notebooks_part(number)), ("exercises", exercises_part(number))):
            path = os.path.join(GENERATED, f"ch{number:02d}", f"{part}.md")
            write_if_changed(path, text)
            wanted.add(path)
    for chapter in glob.glob(os.path.join(BOOK, "chapters", "*.md")):
        with open(chapter, encoding="utf-8") as f:
            included = set(FIGURE_INCLUDE.findall(f.read()))
        for experiment, name in included:
            path = os.path.join(GENERATED, "figures", experiment, f"{name}.md")
            write_if_changed(path, figure_part(experiment, "*" if name == "all" else name, captions))
            wanted.add(path)
    for name, text in measured.tables(FIGURES).items():
        path = os.path.join(GENERATED, "measured", f"{name}.md")
        write_if_changed(path, text)
        wanted.add(path)
    for experiment in CLAIM_INCLUDE.findall("".join(_chapter_texts())):
        path = os.path.join(GENERATED, "claims", f"{experiment}.md")
        write_if_changed(path, measured.claims_block(FIGURES, experiment))
        wanted.add(path)
    path = os.path.join(GENERATED, "scorecard.md")
    write_if_changed(path, measured.scorecard_page(FIGURES))
    wanted.add(path)
    for path in glob.glob(os.path.join(GENERATED, "**", "*.md"), recursive=True):
        if path not in wanted:
            os.remove(path)
    draw_floors()


def draw_floors():
    """``_generated/floors.png``: the floors of the checkout's package, read from its imports."""
    from minishare.analysis import floors
    from minishare.analysis.figure_style import save_figure
    save_figure(floors.plot_floors(floors.read(os.path.join(ROOT, "minishare"))), os.path.join(GENERATED, "floors"))


def setup(app):
    app.connect("config-inited", generate)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
