"""``check``: is the assignment set sound? Three questions, one line per problem found:

1. Does every test, hidden ones included, pass on the teacher's solutions? Does every test carry
   exactly one task marker of its own exercise, and has every task at least one visible test?
2. In a fresh release, does every visible test still exist, and fail because the stub raises its
   ``NotImplementedError("exNN task k")``, not because something does not import?
3. Is nothing of a solution left in the release: no region markers, no line of a solution region,
   no hidden test, no answer file?
"""
import concurrent.futures
import os
import re
import shutil
import tempfile
import time

from minishare.exercises import catalog, grade, regions, release

STUB = re.compile(r"^(ex\d\d) task (\d+)$")
SECRET_MIN_LENGTH = 20    # shorter solution lines (``return y``) are too common to be a leak


def _first_line(text):
    return (text or "").strip().splitlines()[-1:][0] if (text or "").strip() else ""


def check_markers(exercises, collected, hidden):
    problems = []
    known = catalog.markers(exercises)
    for nodeid, marks in sorted(collected.items()):
        folder_id = nodeid[:4]
        if len(marks) != 1 or marks[0] not in known or not marks[0].startswith(folder_id):
            problems.append(f"{nodeid}: needs exactly one task marker of {folder_id} from the "
                            f"table, has {marks or 'none'}")
    for marker in known:
        tests = [n for n, marks in collected.items() if marks == [marker]]
        if not any(not release.is_hidden(n, hidden) for n in tests):
            problems.append(f"{marker}: no visible test (students could not run pytest -m {marker})")
    return problems


def check_solutions(runs):
    problems = []
    for run in runs.values():
        problems += [f"{path}: does not collect on the solutions: {_first_line(out)}"
                     for path, out in run.collect_errors.items()]
        problems += [f"{nodeid}: fails on the solutions: {r['exc_type']}: {_first_line(r['message'])}"
                     for nodeid, r in sorted(run.tests.items()) if r["outcome"] != "passed"]
        problems += run.problems
    return problems


def check_release(exercises, expected, hidden, runs):
    problems = []
    ran = {nodeid: r for run in runs.values() for nodeid, r in run.tests.items()}
    for run in runs.values():
        problems += [f"release {path}: does not collect: {_first_line(out)}"
                     for path, out in run.collect_errors.items()]
        problems += run.problems
    for nodeid in sorted(expected):
        result = ran.get(nodeid)
        if release.is_hidden(nodeid, hidden):
            if result is not None:
                problems.append(f"release {nodeid}: a hidden test is in the release")
            continue
        if result is None:
            problems.append(f"release {nodeid}: the visible test is missing from the release")
        elif result["outcome"] == "passed":
            problems.append(f"release {nodeid}: passes on the stub (a test that cannot fail)")
        elif result["exc_type"] != "NotImplementedError" or not STUB.match(result["message"]) \
                or result["message"][:4] != nodeid[:4]:
            problems.append(f"release {nodeid}: fails with {result['exc_type']}: "
                            f"{_first_line(result['message'])[:120]!r}, not the stub's "
                            f"NotImplementedError(\"{nodeid[:4]} task k\")")
    problems += [f"release {nodeid}: a test the teacher's tree does not have"
                 for nodeid in sorted(set(ran) - set(expected))]
    return problems


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
    for path, lines in sorted(released.items()):     # (prose, such as a README, may name them)
        if path.endswith(".py") and any(regions.ANY_MARKER.search(line) for line in lines):
            problems.append(f"release {path}: still holds a region marker")
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
            # where a pasted answer would be read: this exercise's files and the top-level ones
            nearby = {p: l for p, l in released.items()
                      if p.startswith(exercise.folder + os.sep) or os.sep not in p}
            for other, lines in sorted(nearby.items()):
                for line in sorted(secrets & lines):
                    problems.append(f"release {other}: holds a line of a solution of {path}: {line[:80]!r}")
    for path, names in sorted(hidden.items()):
        text = "\n".join(released.get(path, ()))
        for name in sorted(names):
            if re.search(rf"\b{name}\b", text):
                problems.append(f"release {path}: names the hidden test {name}")
    return problems


def check(root, timeout=60.0, jobs=2, say=print):
    """Run the three checks; returns the list of problems (empty when sound) and prints counts."""
    started = time.monotonic()
    try:
        exercises = catalog.load(root)
        hidden = release.hidden_names(root, exercises)
    except (catalog.CatalogError, regions.RegionError) as err:
        return str(err).splitlines()
    with tempfile.TemporaryDirectory(prefix="minishare-check-") as scratch:
        tree, out = os.path.join(scratch, "teacher"), os.path.join(scratch, "release")
        shutil.copytree(root, tree, ignore=grade.COPY_IGNORE)
        try:
            release.release(root, out)
        except (regions.RegionError, OSError) as err:
            released = False
            problems = [f"release: {err}"]
        else:
            released, problems = True, []
        # the teacher's tree and the release each in one pytest process, side by side
        with concurrent.futures.ThreadPoolExecutor(max_workers=2 if jobs > 1 else 1) as pool:
            solutions = pool.submit(grade.run_exercises, tree, exercises, timeout, jobs, True)
            stubs = pool.submit(grade.run_exercises, out, exercises, timeout, jobs, True) if released else None
            solutions = solutions.result()
            collected = {n: m for run in solutions.values() for n, m in run.collected.items()}
            problems = check_markers(exercises, collected, hidden) + check_solutions(solutions) + problems
            if stubs is not None:
                problems += check_release(exercises, collected, hidden, stubs.result())
                problems += check_leaks(root, exercises, hidden, out)
    n_hidden = sum(release.is_hidden(n, hidden) for n in collected)
    say(f"checked {len(exercises)} exercises, {sum(len(e.tasks) for e in exercises)} tasks, "
        f"{len(collected)} tests ({len(collected) - n_hidden} visible, {n_hidden} hidden) "
        f"in {time.monotonic() - started:.0f} s")
    return problems
