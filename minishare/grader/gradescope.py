"""``gradescope --out autograder.zip``: the autograder Gradescope builds its image from.

Gradescope unpacks the zip into ``/autograder/source``; at its top level it holds:

* ``setup.sh``: run once, as root, when the image is built: a virtual environment from the
  image's ``python3`` with ``requirements-grading.txt`` (NumPy and pytest, nothing the course
  alone needs), the library installed from the zip (its package only: no ``exercises/`` comes
  with it), an unprivileged user ``student`` for submissions, and the teacher's files made
  readable by root alone.
* ``run_autograder``: run as root for each submission (``/autograder/submission``): grades it
  with the submission's code as ``student`` and writes ``/autograder/results/results.json``.
* ``exercises/``: the teacher's tree (solutions and hidden cases; mutants stay home) and
  ``minishare/``, ``pyproject.toml``: the library.

``AUTOGRADER_ROOT`` moves ``/autograder`` (for a dry run in a scratch folder).

``--golf``: the class competition's autograder instead (``minishare.grader.golf``): the same
``setup.sh``, no ``exercises/``, a ``golf_draw.json`` (the seed of the grammar stories, drawn when
the zip is built, so every submission of a class is scored on the same stories, which no student
can rebuild; root's alone after ``setup.sh``), and a ``run_autograder`` that grades the
submission's ``entry.json`` in the grader's own process (a code-track ``model.py`` runs in the
sandbox as ``student``) and writes ``results.json`` with its ``leaderboard`` field.
"""
import json
import os
import secrets
import shutil
import stat
import tempfile
import zipfile

from minishare.grader import catalog, release

SETUP = """#!/usr/bin/env bash
# Gradescope runs this once, as root, to build the autograder's image.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
# the system's Python (/usr/bin): one the unprivileged user can run, unlike a Python under /root
if ! /usr/bin/python3 -c "import venv, ensurepip" 2>/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv >/dev/null
fi
/usr/bin/python3 -m venv "$ROOT/venv"
"$ROOT/venv/bin/pip" install --quiet -r "$ROOT/source/minishare/grader/requirements-grading.txt"
"$ROOT/venv/bin/pip" install --quiet --no-deps "$ROOT/source"   # its dependencies are the line above
id student >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin student
chmod -R go-rwx "$ROOT/source"            # the solutions and hidden cases: root's alone
"""

RUN = """#!/usr/bin/env bash
# Gradescope runs this, as root, for each submission.
set -uo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
mkdir -p "$ROOT/results"
cd /
# the teacher's notes (stderr) join the log that results.json's stdout_visibility keeps from students
MINISHARE_GRADER_USER=student "$ROOT/venv/bin/python" -m minishare.grader \\
    --source "$ROOT/source/exercises" grade "$ROOT/submission" --json "$ROOT/results/results.json" {only} 2>&1
"""

RUN_GOLF = """#!/usr/bin/env bash
# Gradescope runs this, as root, for each submission: one entry.json, read as data (a code-track
# model.py beside it runs in the sandbox, as student).
set -uo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
mkdir -p "$ROOT/results"
cd /
OPENBLAS_NUM_THREADS=1 MINISHARE_GRADER_USER=student "$ROOT/venv/bin/python" -m minishare.grader \\
    grade --golf "$ROOT/submission" --draw-file "$ROOT/source/golf_draw.json" \\
    --json "$ROOT/results/results.json" 2>&1
"""


def build(root, out, only=None, golf=False):
    """Write the autograder zip for the exercises under ``root`` (those in ``only``) to ``out``;
    ``golf``: the competition's instead (``root`` and ``only`` unused)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory(prefix="minishare-gradescope-") as scratch:
        source = os.path.join(scratch, "source")
        os.makedirs(source)
        run = RUN_GOLF if golf else _exercises(root, only, source)
        if golf:
            with open(os.path.join(source, "golf_draw.json"), "w", encoding="utf-8") as f:
                json.dump({"draw": 1 + secrets.randbelow(2 ** 32 - 1)}, f)     # 0 is the course's public draw
        shutil.copytree(package, os.path.join(source, "minishare"), ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        with open(os.path.join(source, "pyproject.toml"), "w", encoding="utf-8") as f:
            f.write('[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n\n'
                    '[project]\nname = "minishare"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
                    'dependencies = ["numpy>=1.24"]\n\n[tool.setuptools.packages.find]\ninclude = ["minishare*"]\n')
        scripts = {"setup.sh": SETUP, "run_autograder": run}
        out = os.path.abspath(out)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        partial = out + ".partial"
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as z:
            for name, text in scripts.items():
                info = zipfile.ZipInfo(name)
                info.external_attr = (stat.S_IFREG | 0o755) << 16
                z.writestr(info, text)
            for directory, _, files in os.walk(source):
                for name in sorted(files):
                    path = os.path.join(directory, name)
                    z.write(path, os.path.relpath(path, source))
        os.replace(partial, out)
    return out


def _exercises(root, only, source):
    """Copy the exercises under ``root`` (those in ``only``) to ``source/exercises``; returns the
    ``run_autograder`` that grades them."""
    exercises = catalog.select(catalog.load(root), only)
    tree = os.path.join(source, "exercises")
    os.makedirs(tree)
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if os.path.isfile(path) and not name.startswith("."):
            shutil.copyfile(path, os.path.join(tree, name))
    if only:
        with open(os.path.join(tree, catalog.TABLE), encoding="utf-8") as f:
            table = json.load(f)
        with open(os.path.join(tree, catalog.TABLE), "w", encoding="utf-8") as f:
            json.dump({e.id: table[e.id] for e in exercises}, f, indent=1, ensure_ascii=False)
    for exercise in exercises:
        shutil.copytree(os.path.join(root, exercise.folder), os.path.join(tree, exercise.folder),
                        ignore=shutil.ignore_patterns(*release.SKIP, "*.pyc"))
    return RUN.replace("{only}", " ".join(f"--only {e.id}" for e in exercises) if only else "")
