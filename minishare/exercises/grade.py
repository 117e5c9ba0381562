"""``grade``: score a student's submission with every test, hidden ones included.

The submission is a folder laid out as the release (``ex03_attention/attention.py``, ...). Only
the files the table lets a student edit are taken from it, into a fresh copy of the teacher's tree;
a file the student did not hand in is removed from that copy (the teacher's own solution must not
stand in for it). Each exercise runs in its own pytest process (``runner``): a test that loops or
crashes scores zero and the others still count. A task's points are shared equally by its tests.

``--json`` writes Gradescope's autograder ``results.json``: top-level ``score`` and ``tests``, each
test with ``name``, ``score``, ``max_score``, ``output`` and ``visibility`` (hidden tests are shown
to students once the grades are published).
"""
import concurrent.futures
import json
import os
import shutil
import tempfile

from minishare.exercises import catalog, release, runner
from minishare.files import atomic_write

COPY_IGNORE = shutil.ignore_patterns("__pycache__", ".pytest_cache", "*.pyc")


def run_exercises(tree, exercises, timeout, jobs, together=False):
    """{exercise id: runner.Run} for every exercise, ``jobs`` pytest processes at a time; with
    ``together``, one process for all (faster: pytest and NumPy start once), under the id "all"."""
    if together:
        return {"all": runner.run(tree, [e.folder for e in exercises], timeout)}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {e.id: pool.submit(runner.run, tree, [e.folder], timeout) for e in exercises}
        return {ex_id: future.result() for ex_id, future in futures.items()}


def take_submission(submission, tree, exercises):
    """Put the student's editable files into ``tree``; returns notes on what was missing."""
    notes = []
    for exercise in exercises:
        for relative in exercise.edit:
            target = os.path.join(tree, exercise.folder, relative)
            if os.path.exists(target):
                os.remove(target)
            source = os.path.join(submission, exercise.folder, relative)
            if os.path.isfile(source) and not os.path.islink(source):
                shutil.copyfile(source, target)
            else:
                notes.append(f"{exercise.folder}/{relative}: not in the submission")
    return notes


def score(exercises, expected, runs, hidden):
    """Rows per test: (exercise, task, nodeid, passed, score, max_score, output, hidden)."""
    rows = []
    for exercise in exercises:
        run = runs[exercise.id]
        for task in exercise.tasks:
            tests = [n for n, marks in expected.items() if marks == [task.marker]]
            for nodeid in tests:
                result = run.tests.get(nodeid)
                if result is None:
                    path = nodeid.split("::")[0]
                    output = run.collect_errors.get(path) or "not run"
                    passed = False
                else:
                    passed = result["outcome"] == "passed"
                    output = "" if passed else f"{result['exc_type']}: {result['message']}\n\n{result['output']}"
                share = task.points / len(tests)
                rows.append(dict(exercise=exercise.id, task=task.marker, nodeid=nodeid, passed=passed,
                                 score=share if passed else 0.0, max_score=share, output=output,
                                 hidden=release.is_hidden(nodeid, hidden)))
    return rows


def table(exercises, rows):
    """The score table as text: one line per task, then the total."""
    lines = [f"{'task':<12} {'tests':>7} {'score':>13}  title"]
    for exercise in exercises:
        lines.append(f"{exercise.id}: {exercise.title}")
        for task in exercise.tasks:
            mine = [r for r in rows if r["task"] == task.marker]
            got = sum(r["score"] for r in mine)
            lines.append(f"{task.marker:<12} {sum(r['passed'] for r in mine):>3}/{len(mine):<3} "
                         f"{got:>6.2f} / {task.points:<4g}  {task.title}")
    total, best = sum(r["score"] for r in rows), sum(e.points for e in exercises)
    lines.append(f"{'total':<12} {sum(r['passed'] for r in rows):>3}/{len(rows):<3} "
                 f"{total:>6.2f} / {best:<4g}")
    return "\n".join(lines)


def gradescope(exercises, rows):
    """Gradescope's results.json as a dict."""
    titles = {t.marker: f"{e.title}: {t.title}" for e in exercises for t in e.tasks}
    tests = [{"name": f"{r['task']} ({titles[r['task']]}) {r['nodeid'].split('::', 1)[1]}",
              "score": round(r["score"], 4), "max_score": round(r["max_score"], 4),
              "output": r["output"], "visibility": "after_published" if r["hidden"] else "visible"}
             for r in rows]
    return {"score": round(sum(r["score"] for r in rows), 4), "tests": tests}


def grade(root, submission, json_path=None, timeout=60.0, jobs=2, together=False):
    """Grade ``submission``; returns (rows, the table as text, notes). ``together`` runs every
    exercise in one pytest process (faster; a crash then also stops the other exercises' tests
    until the runner restarts, so keep it for trusted code such as the solutions)."""
    exercises = catalog.load(root)
    if not os.path.isdir(submission):
        raise FileNotFoundError(f"grade: {submission} is not a folder")
    hidden = release.hidden_names(root, exercises)
    expected = runner.run(root, [e.folder for e in exercises], timeout, collect_only=True)
    if expected.collect_errors or expected.problems:
        raise RuntimeError("grade: the teacher's tests do not collect: "
                           + "; ".join(list(expected.collect_errors) + expected.problems))
    with tempfile.TemporaryDirectory(prefix="minishare-grade-") as scratch:
        tree = os.path.join(scratch, "exercises")
        shutil.copytree(root, tree, ignore=COPY_IGNORE)
        notes = take_submission(submission, tree, exercises)
        runs = run_exercises(tree, exercises, timeout, jobs, together)
    if together:
        runs = {e.id: runs["all"] for e in exercises}
    rows = score(exercises, expected.collected, runs, hidden)
    if json_path:
        with atomic_write(json_path) as f:
            json.dump(gradescope(exercises, rows), f, indent=1)
    return rows, table(exercises, rows), notes
