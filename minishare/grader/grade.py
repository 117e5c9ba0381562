"""``grade``: score a submission where its code cannot reach the score.

For each exercise:

1. **Find the files.** The files the table lets a student edit are taken from the submission,
   laid out as the release (``ex03_attention/attention.py``) or flat (``attention.py``, as
   Gradescope uploads arrive), or anywhere below; nothing else of the submission is used.
2. **Read them** (``scan``): a use of what the exercise forbids costs the tasks it could serve.
3. **Choose the inputs**: each case's ``given`` function, the hidden ones seeded per submission by
   a secret of the grader's (``secrets``), so a hidden input published once is worth nothing.
4. **Run the probes** (``sandbox``): the visible cases in one worker, the hidden ones in another,
   so nothing a visible case shows at once can come from a hidden test; and the same probes, on the
   same inputs, on the reference solution (or, in a release, its ``expected.json``). A worker
   holds probes only: no judge, reference helper or expected value is ever in its process.
5. **Judge** in a process of the grader's own with a time and memory limit per case
   (``judging``): each case's judge gets the submission's data, the reference's and the inputs;
   the worker's tripwires and audit hook add what they refused, and a refusal in any case of a
   task costs the whole task. A task's points are shared by its cases so that the shares add up
   to the task's points exactly.

``--json`` writes Gradescope's ``results.json``: ``score``, ``output`` (the notes), and per case
``name``, ``score``, ``max_score``, ``output``, ``visibility`` (hidden cases ``after_published``).
"""
import ast
import concurrent.futures
import io
import json
import os
import secrets
import tempfile
import tokenize

from minishare.grader import catalog, cases, judging, regions, sandbox, scan
from minishare.grader.suites import load_suite, reference_texts, references
from minishare.files import atomic_write

MAX_FILE = 5 * 2 ** 20            # bytes of one submitted file
UNIT = 1024                       # a case's points are multiples of 1/UNIT (see ``split``)
JUDGE_TIME = 30.0                 # seconds a judge may take, at least (twice the case's own limit)


def find_files(submission, exercise, everything):
    """({relative path: bytes} of the exercise's editable files, notes). ``everything``: every
    editable path of the assignment, so a flat upload's file names can be told apart."""
    found, notes = {}, []
    files = {}
    for directory, subdirs, names in os.walk(submission):
        subdirs[:] = [d for d in subdirs if not d.startswith((".", "__"))]
        for name in names:
            files[os.path.relpath(os.path.join(directory, name), submission)] = os.path.join(directory, name)
    for relative in exercise.edit:
        wanted = os.path.join(exercise.folder, relative)
        matches = [p for p in files if p == wanted or p.endswith(os.sep + wanted)]
        if not matches and sum(os.path.basename(e) == os.path.basename(relative) for e in everything) == 1:
            matches = [p for p in files if os.path.basename(p) == os.path.basename(relative)]
        if not matches:
            notes.append(f"{wanted}: not in the submission")
            continue
        if len(matches) > 1:
            notes.append(f"{wanted}: {len(matches)} files could be it ({', '.join(sorted(matches)[:3])}); "
                         f"graded {sorted(matches, key=len)[0]}")
        path = files[sorted(matches, key=len)[0]]
        if os.path.islink(path) or not os.path.isfile(path) or os.path.getsize(path) > MAX_FILE:
            notes.append(f"{wanted}: not a regular file of at most {MAX_FILE // 2 ** 20} MiB; not graded")
            continue
        with open(path, "rb") as f:
            found[relative] = f.read()
    return found, notes


def static_breaches(exercise, files, reference_texts):
    """{marker: [message]} of the uses ``scan`` finds in the submitted Python files."""
    costs = {}
    task_forbid = {t.marker: list(t.forbid) for t in exercise.tasks}
    for relative, content in files.items():
        if not relative.endswith(".py"):
            continue
        functions = _task_functions(reference_texts.get(relative, ""), relative, exercise.id)
        text = source_text(content)
        if text is None:
            for task in exercise.tasks:
                costs.setdefault(task.marker, []).append(
                    f"{relative} cannot be decoded in the encoding it declares, so it cannot be read")
            continue
        for breach in scan.scan(text, relative, exercise.forbid, task_forbid, functions, exercise.files):
            for marker in breach.tasks:
                costs.setdefault(marker, []).append(f"{relative}:{breach.line} uses {breach.use}, "
                                                    "which this exercise does not allow")
    return costs


def source_text(content):
    """The text Python reads from ``content`` (the encoding its coding line or BOM declares,
    UTF-8 by default), or None when it cannot be decoded: the scan must see what runs."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(content).readline)
        return content.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return None


def _task_functions(text, path, exercise_id):
    """{function qualname: markers} of the solution regions of the reference module."""
    if "### BEGIN SOLUTION" not in text:
        return {}
    tree = ast.parse(text)
    lines = {first + 1: task for first, _, task in regions.regions(text, path, "solution")}
    found = {}

    def visit(node, scope):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = child.name if scope is None else f"{scope}.{child.name}"
                for line, task in lines.items():
                    if child.lineno < line <= child.end_lineno and not isinstance(child, ast.ClassDef):
                        found.setdefault(name, set()).add(f"{exercise_id}_task{task}")
                visit(child, name)
    visit(tree, None)
    return {k: tuple(sorted(v)) for k, v in found.items()}


def grade_exercise(root, suite, files, box, refs, scratch, judges, seed=None, task=None):
    """Rows of one exercise: one per case. ``refs``: the reference's records on the public
    inputs; ``seed``: the grader's secret for the hidden inputs (None: the public ones);
    ``task``: only that task's cases, visible and hidden in one worker (``check``'s mutants: the
    teacher's own code, so nothing needs keeping apart)."""
    exercise = suite.exercise
    tasks = [t for t in exercise.tasks if task in (None, t.marker)]
    wanted = [n for n, c in suite.cases.items() if c.marker in {t.marker for t in tasks}]
    given = suite.inputs(wanted, seed)
    redrawn = [n for n in suite.names(hidden=True) if n in given]
    if seed is not None and redrawn:           # the reference on this submission's hidden inputs
        refs = {**refs, **references(root, suite, box, redrawn, seed)}
    costs = static_breaches(exercise, files, reference_texts(root, exercise))
    forbid = {name: [] for name in exercise.forbid if not name.startswith(".")}
    for one in exercise.tasks:
        for name in one.forbid:
            if not name.startswith("."):
                forbid.setdefault(name, []).append(one.marker)
    modules = [m for m in exercise.forbid + tuple(n for t in exercise.tasks for n in t.forbid)
               if not m.startswith(".")]
    records, import_breaches = {}, []
    released = os.path.join(scratch, f"{exercise.id}_visible_{os.path.basename(suite.path)}")
    with open(suite.path, encoding="utf-8") as f:
        text = f.read()
    with open(released, "w", encoding="utf-8") as f:
        f.write(regions.strip_hidden(text, suite.path))
    timeouts = {n: c.timeout for n, c in suite.cases.items()}
    runs = [(wanted, suite.path)] if task else [(suite.names(False), released), (suite.names(True), suite.path)]
    for names, case_file in runs:
        if names:
            result = box.run(files, case_file, names, exercise.modules, forbid, modules, timeouts,
                             {n: given[n] for n in names if n in given})
            records.update(result.records)
            import_breaches += result.breaches
    for breach in import_breaches:
        for one in exercise.tasks:
            costs.setdefault(one.marker, []).append(f"while the module imported: {breach}")
    for name, record in records.items():      # a forbidden use in one case costs its whole task
        for breach in (record or {}).get("breaches", ()):
            costs.setdefault(suite.cases[name].marker, []).append(breach)
    rows = []
    for one in tasks:
        names = [n for n, c in suite.cases.items() if c.marker == one.marker]
        for name, share in zip(names, split(one.points, len(names))):
            passed, output = judge(suite, name, records.get(name), refs.get(name), given.get(name),
                                   costs.get(one.marker), judges)
            rows.append(dict(exercise=exercise.id, task=one.marker, name=name, passed=passed,
                             score=share if passed else 0.0, max_score=share, output=output,
                             hidden=name in suite.hidden))
    return rows


def judge(suite, name, record, ref, given, breaches, judges):
    """(passed, output) of one case."""
    graded = suite.cases[name]
    head = f"{graded.doc}\n\n" if graded.doc else ""
    if breaches:
        return False, head + "scored zero: " + "; ".join(sorted(set(breaches)))
    if record is None:
        return False, head + "not run"
    if "error" in record:
        return False, head + record["error"]
    if ref is None or "error" in ref:
        return False, head + "the grader has no reference for this case (tell your teacher)"
    passed, output = judges.verdict(suite.path, name, record["data"], ref["data"],
                                    json.loads(cases.encode(given)), max(JUDGE_TIME, 2 * graded.timeout))
    return passed, (head + output) if not passed else ""


def split(points, n):
    """``n`` shares of ``points`` in units of 1/1024 (differing by at most one unit) that add up to
    ``points`` exactly: binary fractions, so any sum of them in floating point is exact too, and
    Gradescope's total of the ``max_score`` values is the assignment's points to the last bit."""
    units = round(points * UNIT)
    base, extra = divmod(units, n)
    return [(base + (i < extra)) / UNIT for i in range(n)]


def grade(root, submission, json_path=None, only=None, jobs=2, box=None, refs=None, seed=None,
          allow_root=False):
    """Grade ``submission``; returns (rows, the table as text, notes for the teacher). ``refs``
    ({exercise id: references}) may be given to grade many submissions against one reference run;
    ``seed`` fixes the hidden inputs (default: a fresh secret); ``allow_root``: run submissions
    as root when no unprivileged user can (a local test of the teacher's own, never for students)."""
    exercises = catalog.select(catalog.load(root), only)
    if not os.path.isdir(submission):
        raise FileNotFoundError(f"grade: {submission} is not a folder")
    everything = [os.path.join(e.folder, r) for e in catalog.load(root) for r in e.edit]
    seed = secrets.randbits(63) if seed is None else seed
    own = box is None
    box = box or sandbox.Sandbox(deny=[root], allow_root=allow_root)
    judges = judging.Judges()
    try:
        suites = [load_suite(root, e) for e in exercises]
        refs = refs if refs is not None else reference_data(root, suites, box, jobs)
        said = []                              # notes the student sees (files not found)
        with tempfile.TemporaryDirectory(prefix="minishare-grade-") as scratch, \
                concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = []
            for suite in suites:
                files, missing = find_files(submission, suite.exercise, everything)
                said += missing
                futures.append(pool.submit(grade_exercise, root, suite, files, box, refs[suite.exercise.id],
                                           scratch, judges, seed))
            rows = [row for future in futures for row in future.result()]
        judges.close()
        notes = [box.note] + said + box.sweep()   # the teacher's; nothing of the submission's still runs
    finally:
        judges.close()
        if own:
            box.close()
    if json_path:
        with atomic_write(json_path) as f:
            json.dump(gradescope(exercises, rows, said), f, indent=1)
        notes += box.sweep()                   # and nothing started since could rewrite it
    return rows, table(exercises, rows), notes


def reference_data(root, suites, box, jobs=2):
    """{exercise id: {case name: record}} of the reference solutions."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {s.exercise.id: pool.submit(references, root, s, box) for s in suites}
        return {ex_id: f.result() for ex_id, f in futures.items()}


def table(exercises, rows):
    """The score table as text: one line per task, then the total."""
    lines = [f"{'task':<12} {'cases':>7} {'score':>13}  title"]
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


def gradescope(exercises, rows, notes):
    """Gradescope's results.json as a dict; ``notes`` are shown to the student (files not
    found), so nothing of the grader's own goes there."""
    titles = {t.marker: f"{e.title}: {t.title}" for e in exercises for t in e.tasks}
    tests = [{"name": f"{r['task']} ({titles[r['task']]}) {r['name']}", "score": r["score"],
              "max_score": r["max_score"], "output": r["output"],
              "visibility": "after_published" if r["hidden"] else "visible"} for r in rows]
    score = sum(r["score"] for r in rows)          # exact: binary fractions (``split``)
    return {"score": score, "output": "\n".join(notes), "stdout_visibility": "hidden", "tests": tests}
