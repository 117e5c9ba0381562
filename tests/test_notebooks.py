"""Every notebook of the course runs top to bottom in quick mode, as CI runs it: the jupytext
source (``notebooks/NN_topic.py``) is turned into a notebook and executed by nbclient in a fresh
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
