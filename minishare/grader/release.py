"""``release``: the student copy of ``exercises/``.

What goes out, per exercise folder: the README and every other file as it is, the student's
modules with their solution regions replaced by raises, the test file without its hidden cases
and its ``given`` functions (``probes.released_source``: an input can be another task's answer),
and ``expected.json``: the visible cases' inputs and the reference data on them (so ``pytest`` in
the copy judges them as the grader does). What stays behind: the solutions, the hidden cases, the mutants (wrong
solutions the check grades), and the student's answer files that are not Python (a measured
curve, a written defence: the teacher's own answers are solutions too). The top-level files go out
too (the table, ``conftest.py``, ``pytest.ini``), and the README without its section for teachers.
``only`` releases some exercises (a weekly assignment).

The class competition's folder (``golf/``, ``COMPETITION``) goes out with every release, whole or
partial: its README without the section for teachers, and the starter ``entry.json``. It is not an
exercise of the table (a submission is a declaration graded by ``--golf``, not a module with
solution regions), so it has no stubs, cases or ``expected.json``; it holds no answer, and the
competition runs beside the weekly exercises all term.

The copy is built in a temporary folder next to the target and renamed into place at the end, so
a failed release never leaves half a student copy.
"""
import json
import os
import shutil
import tempfile

from minishare.grader import cases, catalog, probes, regions, suites
from minishare.grader.suites import is_test_file

SKIP = ("__pycache__", ".pytest_cache", ".ipynb_checkpoints", "mutants")
TEACHERS = "## For teachers"          # the README's section that stays behind, to the end
COMPETITION = "golf"                  # the competition's folder: released, not in the table


def exercise_files(root, exercise):
    """Paths (relative to the exercise folder) of the files of an exercise in the source tree."""
    folder = os.path.join(root, exercise.folder)
    found = []
    for directory, subdirs, files in os.walk(folder):
        subdirs[:] = sorted(d for d in subdirs if d not in SKIP and not d.startswith("."))
        for name in sorted(files):
            if not name.startswith(".") and not name.endswith(".pyc"):
                found.append(os.path.relpath(os.path.join(directory, name), folder))
    return found


def released_text(root, exercise, relative):
    """The released content of one file (str or bytes), or None when it is not released."""
    path = os.path.join(root, exercise.folder, relative)
    if relative in exercise.edit and not relative.endswith(".py"):
        return None
    if not relative.endswith(".py"):
        with open(path, "rb") as f:
            return f.read()
    with open(path, encoding="utf-8") as f:
        text = f.read()
    shown = os.path.join(exercise.folder, relative)
    if relative in exercise.edit:
        return regions.strip_solutions(text, shown, exercise.id)
    if is_test_file(relative):
        return probes.released_source(regions.strip_hidden(text, shown), shown)
    if regions.ANY_MARKER.search(text):
        raise regions.RegionError(f"{shown}: has region markers but is neither a test file nor "
                                  "a file the table lets a student edit")
    return text


def release(root, out, only=None, box=None):
    """Write the student copy of the exercises under ``root`` (those in ``only``, or all) to the
    new folder ``out``. Returns the number of files written."""
    from minishare.grader import sandbox
    everything = catalog.load(root)
    exercises = catalog.select(everything, only)
    out = os.path.abspath(out)
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise FileExistsError(f"release: {out} exists and is not an empty folder; choose a new one")
    parent = os.path.dirname(out)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(dir=parent, prefix=f".{os.path.basename(out)}.")
    own = box is None
    box = box or sandbox.Sandbox(deny=[root], allow_root=True)    # the reference: the teacher's own code
    written = 0
    try:
        for name in sorted(os.listdir(root)):
            path = os.path.join(root, name)
            if os.path.isfile(path) and not name.startswith("."):
                with open(path, "rb") as f:
                    content = f.read()
                if name == catalog.TABLE and only:
                    content = _table_of(content, exercises)
                elif name == "README.md":
                    content = _students_readme(content.decode("utf-8"), exercises, everything).encode("utf-8")
                with open(os.path.join(staging, name), "wb") as f:
                    f.write(content)
                written += 1
        written += _write_competition(root, staging)
        for exercise in exercises:
            for relative in exercise_files(root, exercise):
                content = released_text(root, exercise, relative)
                if content is None:
                    continue
                target = os.path.join(staging, exercise.folder, relative)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                mode = "wb" if isinstance(content, bytes) else "w"
                with open(target, mode, **({} if mode == "wb" else {"encoding": "utf-8"})) as f:
                    f.write(content)
                written += 1
            written += _write_expected(root, exercise, staging, box)
        if os.path.isdir(out):
            os.rmdir(out)
        os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        if own:
            box.close()
    return written


def _write_competition(root, staging):
    """The competition's folder, if the source has one: its files as they are, its README without
    the section for teachers. Returns the number of files written."""
    folder = os.path.join(root, COMPETITION)
    if not os.path.isdir(folder):
        return 0
    written = 0
    for directory, subdirs, files in os.walk(folder):
        subdirs[:] = sorted(d for d in subdirs if d not in SKIP and not d.startswith("."))
        for name in sorted(files):
            if name.startswith(".") or name.endswith(".pyc"):
                continue
            path = os.path.join(directory, name)
            with open(path, "rb") as f:
                content = f.read()
            if name == "README.md":
                content = (content.decode("utf-8").split(TEACHERS)[0].rstrip() + "\n").encode("utf-8")
            target = os.path.join(staging, os.path.relpath(path, root))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(content)
            written += 1
    return written


def _write_expected(root, exercise, staging, box):
    """``expected.json``: the visible cases' inputs, and the reference solution's data on them."""
    suite = suites.load_suite(root, exercise)
    records = suites.references(root, suite, box)
    visible = suite.names(hidden=False)
    broken = [n for n in visible if "data" not in records.get(n, {})]
    if broken:
        raise RuntimeError(f"release: {exercise.folder}: the reference solution fails the visible cases "
                           f"{', '.join(broken)}: {records.get(broken[0], {}).get('error', 'not run')}")
    with open(os.path.join(staging, exercise.folder, cases.EXPECTED), "w", encoding="utf-8") as f:
        json.dump({"reference": {n: records[n]["data"] for n in visible},
                   "given": {n: json.loads(cases.encode(g)) for n, g in suite.inputs(visible).items()}}, f, indent=0)
    return 1


def _table_of(content, exercises):
    table = json.loads(content)
    kept = {e.id: table[e.id] for e in exercises}
    return (json.dumps(kept, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def _students_readme(text, exercises, everything):
    """The README for students: without the teachers' section, and its table's rows only for the
    exercises released."""
    text = text.split(TEACHERS)[0].rstrip() + "\n"
    if len(exercises) == len(everything):
        return text
    left_out = [e.folder for e in everything if e not in exercises]
    return "\n".join(line for line in text.splitlines()
                     if not (line.startswith("| [") and any(f"({f}/" in line for f in left_out))) + "\n"


def hidden_names(root, exercises):
    """{test file relative to root: names of its hidden test functions}."""
    names = {}
    for exercise in exercises:
        for relative in exercise_files(root, exercise):
            if is_test_file(relative):
                path = os.path.join(exercise.folder, relative)
                with open(os.path.join(root, path), encoding="utf-8") as f:
                    names[path] = regions.hidden_test_names(f.read(), path)
    return names


def is_hidden(nodeid, hidden):
    """Whether the test ``nodeid`` ("ex01_x/test_y.py::test_z[param]") is a hidden one."""
    path, _, name = nodeid.partition("::")
    return name.split("[")[0] in hidden.get(path, ())
