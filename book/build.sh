#!/usr/bin/env bash
# Build the textbook into book/_build/html: warnings are errors (-W), every reference must resolve
# (-n), and the notebooks run in quick mode during the build (a cell that raises fails it; outputs
# are cached in book/_build/.jupyter_cache, keyed on each notebook's source, so a rebuild reruns
# only the notebooks that changed). A notebook that tests/test_notebooks.py already executed for
# exactly the current source (MINISHARE_NOTEBOOK_OUT=book/_build/executed, as CI sets it) is shown
# with those outputs instead of running twice. -E: every page is reread, so no warning hides in a
# cached page. Needs: pip install -r book/requirements.txt && pip install -e .
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export MINISHARE_QUICK=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MPLBACKEND=module://matplotlib_inline.backend_inline
python -m sphinx -E -W -n --keep-going -b html book book/_build/html "$@"
