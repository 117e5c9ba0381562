"""Every notebook of the course is committed twice, as its jupytext source (``notebooks/NN_topic.py``,
the file a change is reviewed in) and as a plain ``.ipynb`` without outputs paired with it (the
file a student opens in Jupyter, VS Code or Colab without jupytext); the two must hold the same
cells. Every notebook runs top to bottom in quick mode, as CI runs it: the jupytext
source is turned into a notebook and executed by nbclient in a fresh
kernel with ``MINISHARE_QUICK=1``; any cell that raises fails the test. Each notebook's time is
printed (not asserted: tests never assert on wall-clock time); the course promises under 60 s.

The notebooks run in the NumPy pass of the test command only: they are long next to unit tests,
and the strict pass would run the same cells again. Notebook 13 switches to the strict backend by
itself, so the strict stand-in is still exercised.
"""
import glob
import os
import time

import pytest

from minishare import backend
from minishare.files import atomic_write

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = sorted(glob.glob(os.path.join(ROOT, "notebooks", "[0-9][0-9]_*.py")))

pytestmark = pytest.mark.skipif(
    backend.name != "numpy",
    reason="notebooks run in the NumPy pass only (notebook 13 switches to the strict backend itself)")

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")
jupytext = pytest.importorskip("jupytext")


def test_the_course_has_its_notebooks():
    names = [os.path.basename(p) for p in NOTEBOOKS]
    assert len(names) >= 10, names
    numbers = [int(n[:2]) for n in names]
    assert numbers == list(range(1, len(numbers) + 1)), f"notebooks are not numbered 01, 02, ...: {names}"


def _cells(notebook):
    return [(c.cell_type, c.source, {k: v for k, v in c.metadata.items() if k != "lines_to_next_cell"})
            for c in notebook.cells]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[os.path.basename(p) for p in NOTEBOOKS])
def test_ipynb_is_paired_and_in_sync(path):
    """The committed .ipynb has exactly the cells jupytext makes of the .py, no outputs, and the
    pairing metadata that makes jupytext (where it is installed) save both files together."""
    ipynb = path[:-3] + ".ipynb"
    fix = f"run `jupytext --sync {os.path.relpath(path, ROOT)}` (or --to ipynb) and commit both files"
    assert os.path.exists(ipynb), f"{os.path.relpath(ipynb, ROOT)} is missing: {fix}"
    committed = nbformat.read(ipynb, as_version=4)
    assert _cells(committed) == _cells(jupytext.read(path)), f"{os.path.basename(ipynb)} differs from its .py: {fix}"
    code = [c for c in committed.cells if c.cell_type == "code"]
    assert all(not c.outputs and c.execution_count is None for c in code), \
        f"{os.path.basename(ipynb)} holds outputs: commit it without (jupyter nbconvert --clear-output)"
    for notebook in (committed, jupytext.read(path)):
        formats = notebook.metadata.get("jupytext", {}).get("formats", "")
        assert set(formats.split(",")) == {"ipynb", "py:percent"}, f"{os.path.basename(path)}: not paired ({formats!r})"


def test_every_ipynb_has_its_source():
    stray = sorted(set(glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb"))) - {p[:-3] + ".ipynb" for p in NOTEBOOKS})
    assert not stray, f"notebooks without a .py source (renamed or removed ones?): {stray}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[os.path.basename(p) for p in NOTEBOOKS])
def test_notebook_runs_in_quick_mode(path, monkeypatch, capsys):
    notebook = jupytext.read(path)
    # the kernel inherits this environment: quick mode, one BLAS thread, this checkout first
    monkeypatch.setenv("MINISHARE_QUICK", "1")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    # a last cell reports the kernel's CPU seconds: on a busy machine the wall clock says little
    notebook.cells.append(nbformat.v4.new_code_cell(
        "import resource; _u = resource.getrusage(resource.RUSAGE_SELF); print(_u.ru_utime + _u.ru_stime)"))
    client = nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": os.path.dirname(path)}})
    start = time.perf_counter()
    client.execute()            # raises CellExecutionError naming the cell on any error
    seconds = time.perf_counter() - start
    cpu = float(notebook.cells[-1].outputs[0]["text"])
    with capsys.disabled():
        print(f"\n[notebook] {os.path.basename(path)}: {seconds:.1f} s wall, {cpu:.1f} s CPU in quick mode")
    outputs = [o for cell in notebook.cells[:-1] if cell.cell_type == "code" for o in cell.get("outputs", [])]
    figures = [o for o in outputs if o.get("output_type") in ("display_data", "execute_result")
               and any(k in o.get("data", {}) for k in ("image/png", "image/svg+xml"))]
    assert figures, f"{os.path.basename(path)} shows no figure (a plot, or a plan that draws itself)"
    # CI sets MINISHARE_NOTEBOOK_OUT=book/_build/executed: the book shows these outputs instead of
    # running every notebook a second time (book/_ext/minishare_book.py, convert_notebooks)
    out = os.environ.get("MINISHARE_NOTEBOOK_OUT")
    if out:
        notebook.cells.pop()                 # the CPU-time cell is this test's, not the course's
        with atomic_write(os.path.join(out, os.path.basename(path)[:-3] + ".ipynb")) as f:
            nbformat.write(notebook, f)
