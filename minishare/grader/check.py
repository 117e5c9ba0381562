"""``check``: is the assignment set sound? One line per problem found:

1. **The table and the cases agree.** Every case carries a task of its own exercise; every task
   has a visible case (students can run ``pytest -m exNN_taskK``) and at least one mutant; the
   file names a student edits differ across exercises (so a flat upload can be sorted).
2. **The solutions get full marks**, graded as a submission is.
3. **The release gets zero**, and each visible case fails with its stub's
   ``NotImplementedError("exNN task K")``, not because something does not import.
4. **Every mutant loses points on its task.** A mutant (``exNN_topic/mutants/taskK_slug.py``, its
   docstring the misconception) is a plausible wrong solution: its code appended to the solution
   module. If one keeps full marks, the cases cannot tell that mistake from the answer.
5. **Nothing of a solution leaks** into the release: no region marker, no line of a solution
   region, no hidden case, no mutant, no answer file.
"""
import ast
import concurrent.futures
import os
import re
import tempfile
import time

from minishare.grader import catalog, grade, judging, regions, release, sandbox, worker
from minishare.grader.suites import load_suite

STUB = re.compile(r"^NotImplementedError: (ex\d\d) task (\d+)")
MUTANT = re.compile(r"^task(\d+)_\w+\.py$")
SECRET_MIN_LENGTH = 20    # shorter solution lines (``return y``) are too common to be a leak


def mutants(root, exercise):
    """[(file name, marker, misconception)] of the exercise's mutants."""
    folder = os.path.join(root, exercise.folder, "mutants")
    found = []
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        match = MUTANT.match(name)
        if name.endswith(".py") and match:
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                doc = ast.get_docstring(ast.parse(f.read())) or ""
            found.append((name, f"{exercise.id}_task{match.group(1)}", " ".join(doc.split())))
    return found


def mutant_files(root, exercise, name):
    """The submission a mutant makes: the solution module with the mutant's code appended."""
    files = _solution_files(root, exercise)
    module = next(e for e in exercise.edit if e.endswith(".py"))
    with open(os.path.join(root, exercise.folder, "mutants", name), "rb") as f:
        files[module] = files[module] + b"\n\n# --- mutant " + name.encode() + b"\n" + f.read()
    return files


def _solution_files(root, exercise):
    """The editable files of ``root``'s exercise folder (a release has no answer files)."""
    files = {}
    for relative in exercise.edit:
        path = os.path.join(root, exercise.folder, relative)
        if os.path.exists(path):
            with open(path, "rb") as f:
                files[relative] = f.read()
    return files


def check_structure(root, suites):
    problems = []
    owners = {}
    for suite in suites:
        exercise = suite.exercise
        markers = {t.marker for t in exercise.tasks}
        for name, graded in suite.cases.items():
            if graded.marker not in markers:
                problems.append(f"{exercise.folder}: case {name} has task {graded.marker}, not one of {sorted(markers)}")
        for task in exercise.tasks:
            mine = [n for n, c in suite.cases.items() if c.marker == task.marker]
            if not any(n not in suite.hidden for n in mine):
                problems.append(f"{task.marker}: no visible case (students could not run pytest -m {task.marker})")
            if not any(m == task.marker for _, m, _ in mutants(root, exercise)):
                problems.append(f"{task.marker}: no mutant (mutants/task{task.marker[-1]}_<mistake>.py): "
                                "nothing shows that its cases catch a wrong solution")
        for relative in exercise.edit:
            owners.setdefault(os.path.basename(relative), []).append(exercise.folder)
        for name in exercise.forbid + tuple(n for t in exercise.tasks for n in t.forbid):
            if name.startswith("minishare") and worker.resolve(name)[2] is None:
                problems.append(f"{exercise.id}: forbid names {name}, which the library does not have "
                                "(renamed?): nothing would stop its use")
    problems += [f"{name}: edited in {', '.join(folders)}; a flat upload could not be sorted"
                 for name, folders in sorted(owners.items()) if len(folders) > 1]
    return problems


def check_solutions(root, suite, box, refs, scratch, judges):
    rows = grade.grade_exercise(root, suite, _solution_files(root, suite.exercise), box, refs, scratch, judges)
    return [f"{suite.exercise.folder}: {r['name']} fails on the solutions: {_last(r['output'])}"
            for r in rows if not r["passed"]]


def check_stubs(suite, out, box, refs, scratch, judges):
    exercise = suite.exercise
    files = _solution_files(out, exercise)
    rows = grade.grade_exercise(out, suite, files, box, refs, scratch, judges)
    problems = [f"release {exercise.folder}: {r['name']} passes on the stub (a case that cannot fail)"
                for r in rows if r["passed"]]
    visible = suite.names(hidden=False)
    records = box.run(files, os.path.join(out, exercise.folder, os.path.basename(suite.path)), visible,
                      exercise.modules, {}, [], {n: suite.cases[n].timeout for n in visible},
                      suite.inputs(visible)).records
    for name in visible:
        error = records.get(name, {}).get("error", "")
        match = STUB.match(error)
        if not match or f"{match.group(1)}_task{match.group(2)}" != suite.cases[name].marker:
            problems.append(f"release {exercise.folder}: {name} fails with {_last(error)[:120]!r}, not the "
                            f"stub's NotImplementedError(\"{suite.cases[name].marker.replace('_task', ' task ')}\")")
    return problems


def check_mutants(root, suite, box, refs, scratch, judges):
    """(problems, {marker: (caught, total)})."""
    problems, counts = [], {}
    for name, marker, doc in mutants(root, suite.exercise):
        rows = grade.grade_exercise(root, suite, mutant_files(root, suite.exercise, name), box, refs, scratch, judges,
                                    task=marker)
        mine = [r for r in rows if r["task"] == marker]
        caught = any(not r["passed"] for r in mine)
        done, total = counts.get(marker, (0, 0))
        counts[marker] = (done + caught, total + 1)
        if not caught:
            problems.append(f"{suite.exercise.folder}/mutants/{name}: keeps full marks on {marker} "
                            f"({doc[:100]}): add a case that catches it")
    return problems, counts


def _released_lines(out):
    """{relative path: set of stripped lines} of every text file in the release."""
    lines = {}
    for directory, _, files in os.walk(out):
        for name in files:
            path = os.path.join(directory, name)
            try:
                with open(path, encoding="utf-8") as f:
                    lines[os.path.relpath(path, out)] = {line.strip() for line in f}
            except UnicodeDecodeError:
                continue
    return lines


def check_leaks(root, exercises, hidden, out):
    problems = []
    released = _released_lines(out)
    for path in sorted(released):
        if path.endswith(".py") and any(regions.ANY_MARKER.search(line) for line in released[path]):
            problems.append(f"release {path}: still holds a region marker")
        if f"{os.sep}mutants{os.sep}" in path:
            problems.append(f"release {path}: a mutant is in the release")
    for exercise in exercises:
        for relative in exercise.edit:
            path = os.path.join(exercise.folder, relative)
            if not relative.endswith(".py"):
                if path in released or os.path.exists(os.path.join(out, path)):
                    problems.append(f"release {path}: the teacher's answer file is in the release")
                continue
            with open(os.path.join(root, path), encoding="utf-8") as f:
                text = f.read()
            inside = set(regions.solution_lines(text, path))
            outside = {line.strip() for line in regions.strip_solutions(text, path, exercise.id).splitlines()}
            secrets = {line for line in inside - outside if len(line) >= SECRET_MIN_LENGTH}
            nearby = {p: l for p, l in released.items()
                      if p.startswith(exercise.folder + os.sep) or os.sep not in p}
            for other, lines in sorted(nearby.items()):
                for line in sorted(secrets & lines):
                    problems.append(f"release {other}: holds a line of a solution of {path}: {line[:80]!r}")
    for path, names in sorted(hidden.items()):
        text = "\n".join(released.get(path, ()))
        for name in sorted(names):
            if re.search(rf"\b{name}\b", text):
                problems.append(f"release {path}: names the hidden case {name}")
    return problems


def check(root, only=None, jobs=2, say=print):
    """Run the checks; returns the list of problems (empty when sound) and says the counts."""
    started = time.monotonic()
    try:
        exercises = catalog.select(catalog.load(root), only)
        hidden = release.hidden_names(root, exercises)
        suites = [load_suite(root, e) for e in exercises]
    except (catalog.CatalogError, regions.RegionError) as err:
        return str(err).splitlines()
    problems = check_structure(root, suites)
    counts = {}
    # solutions, stubs and mutants are the teacher's own code: root may run them
    with sandbox.Sandbox(deny=[root], allow_root=True) as box, judging.Judges() as judges, \
            tempfile.TemporaryDirectory(prefix="minishare-check-") as scratch:
        out = os.path.join(scratch, "release")
        try:
            release.release(root, out, only, box)
        except (regions.RegionError, RuntimeError, OSError) as err:
            problems.append(f"release: {err}")
            out = None
        refs = grade.reference_data(root, suites, box, jobs)

        def one(suite):                              # the exercises are independent: side by side
            ref = refs[suite.exercise.id]
            found = check_solutions(root, suite, box, ref, scratch, judges)
            if out is not None:
                found += check_stubs(suite, out, box, ref, scratch, judges)
            wrong, caught = check_mutants(root, suite, box, ref, scratch, judges)
            return found + wrong, caught

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            for found, caught in pool.map(one, suites):
                problems += found
                counts.update(caught)
        if out is not None:
            problems += check_leaks(root, exercises, hidden, out)
    n_cases = sum(len(s.cases) for s in suites)
    n_hidden = sum(len(s.hidden & set(s.cases)) for s in suites)
    say(f"checked {len(exercises)} exercises, {sum(len(e.tasks) for e in exercises)} tasks, {n_cases} cases "
        f"({n_cases - n_hidden} visible, {n_hidden} hidden), {sum(t for _, t in counts.values())} mutants "
        f"in {time.monotonic() - started:.0f} s ({box.note})")
    for suite in suites:
        for task in suite.exercise.tasks:
            caught, total = counts.get(task.marker, (0, 0))
            mine = [c for c in suite.cases.values() if c.marker == task.marker]
            say(f"  {task.marker:<11} {len(mine):>2} cases ({sum(c.name in suite.hidden for c in mine)} hidden), "
                f"mutants caught {caught}/{total}")
    return problems


def _last(text):
    lines = (text or "").strip().splitlines()
    return lines[-1] if lines else ""
