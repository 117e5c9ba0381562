"""The classroom tool (``python -m minishare.grader``): regions, cases, release, check, grade.

A tiny exercise tree written here exercises each rule; the attacks a student could try are tried
against the real ``exercises/`` (ex05 and ex02 are fast) as a student would: from the release,
with only their own files. Grading runs workers on NumPy whatever the backend, so the strict run
of the suite skips what would repeat the NumPy run exactly.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

from minishare import backend
from minishare.grader import cases, catalog, check, grade, gradescope, regions, release, scan, suites
from minishare.grader.__main__ import main

from conftest import terminal_environment

numpy_run_only = pytest.mark.skipif(backend.name == "strict", reason="workers run on NumPy whatever the "
                                    "backend; the NumPy run of the suite covers this")

STUDENT = '''\
def double(x):
    """Task 1."""
    ### BEGIN SOLUTION task 1
    return 2 * x
    ### END SOLUTION


def square(x):
    ### BEGIN SOLUTION task 2
    return x * x
    ### END SOLUTION
'''

CASES = '''\
from minishare.grader.cases import case


@case("ex01_task1")
def test_double(toy):
    return toy.double(3)


@test_double.judge
def _(out, ref):
    assert out == 6, out


@case("ex01_task2")
def test_square(toy):
    return toy.square(3)


### BEGIN HIDDEN TESTS
@case("ex01_task2", timeout=2)
def test_square_of_a_negative_number(toy):
    return toy.square(-4)
### END HIDDEN TESTS
'''

MUTANTS = {"task1_triples.py": '"""Triples instead of doubling."""\n\n\ndef double(x):\n    return 3 * x\n',
           "task2_abs.py": '"""Squares the absolute value wrongly: x * abs(x)."""\n\n\ndef square(x):\n    return x * abs(x)\n'}


def make_tree(root, student=STUDENT, tests=CASES, readme="# Toy\n", mutants=MUTANTS):
    """A one-exercise tree: ex01_toy with toy.py (2 tasks), its cases, mutants and an answer file."""
    folder = root / "ex01_toy"
    (folder / "mutants").mkdir(parents=True)
    (folder / "toy.py").write_text(student)
    (folder / "test_ex01_toy.py").write_text(tests)
    (folder / "README.md").write_text(readme)
    (folder / "answer.txt").write_text("the teacher's answer\n")
    for name, text in mutants.items():
        (folder / "mutants" / name).write_text(text)
    table = {"ex01": {"title": "Toy", "edit": ["toy.py", "answer.txt"],
                      "tasks": {"task1": {"points": 2, "title": "double"},
                                "task2": {"points": 4, "title": "square"}}}}
    (root / "points.json").write_text(json.dumps(table))
    real = catalog.default_root()
    for name in ("conftest.py", "pytest.ini"):
        shutil.copyfile(os.path.join(real, name), root / name)
    (root / "README.md").write_text("# Exercises\n\n## For students\n\nRun pytest.\n\n## For teachers\n\nSecrets.\n")
    return root


def submit(tmp_path, name, text, folder="ex01_toy"):
    """A submission folder holding one file, laid out as the release."""
    target = tmp_path / "sub" / folder / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(textwrap.dedent(text))
    return tmp_path / "sub"


def scores(rows):
    return {r["name"]: r["score"] for r in rows}


# ---------------------------------------------------------------------------- regions and cases
def test_solution_region_becomes_a_raise_naming_the_task():
    stub = regions.strip_solutions(STUDENT, "toy.py", "ex07")
    assert 'raise NotImplementedError("ex07 task 1")' in stub and 'raise NotImplementedError("ex07 task 2")' in stub
    assert "2 * x" not in stub and "SOLUTION" not in stub and '"""Task 1."""' in stub


def test_regions_outside_a_function_or_unbalanced_are_refused():
    with pytest.raises(regions.RegionError, match="inside a function body"):
        regions.strip_solutions("### BEGIN SOLUTION task 1\nX = 1\n### END SOLUTION\n", "m.py", "ex01")
    with pytest.raises(regions.RegionError, match="never closed"):
        regions.strip_solutions("def f():\n    ### BEGIN SOLUTION task 1\n    return 1\n", "m.py", "ex01")
    with pytest.raises(regions.RegionError, match="END without BEGIN"):
        regions.strip_hidden("x = 1\n### END HIDDEN TESTS\n", "t.py")


def test_data_crosses_as_json_and_only_data_crosses():
    data = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": (1, 2.5, None, "s", True), "c": np.int64(7)}
    back = cases.decode(cases.encode(data))
    assert back["a"].dtype == np.float32 and back["a"].shape == (2, 3) and back["b"] == [1, 2.5, None, "s", True]
    assert back["c"] == 7 and type(back["c"]) is int
    with pytest.raises(TypeError, match="a object cannot be sent|cannot be sent"):
        cases.encode(object())
    with pytest.raises(TypeError, match="dtype object"):
        cases.encode(np.array([object()]))


def test_same_names_the_first_difference():
    cases.same({"x": np.array([1.0, 2.0])}, {"x": np.array([1.0, 2.0 + 1e-12])})
    with pytest.raises(AssertionError, match=r"\['x'\]\[1\]: 2.5, expected 2.0"):
        cases.same({"x": np.array([1.0, 2.5])}, {"x": np.array([1.0, 2.0])})
    with pytest.raises(AssertionError, match="expected 3"):
        cases.same(3.0, 3)                         # a float where the answer is an integer
    with pytest.raises(AssertionError, match=r"\[1\]"):
        cases.same([1, 2], [1, 3])


def test_scan_resolves_imports_and_costs_the_task_that_uses_them():
    source = textwrap.dedent('''\
        import minishare.functional as F
        from minishare import sharing

        def double(x):
            return F.softmax(x)

        def square(x):
            return sharing.assign(x) + eval("1")
        ''')
    found = scan.scan(source, "toy.py", ["minishare.sharing"], {"ex01_task1": ["minishare.functional.softmax"],
                                                                "ex01_task2": []},
                      {"double": ("ex01_task1",), "square": ("ex01_task2",)})
    assert [(b.line, b.use, b.tasks) for b in found] == [
        (2, "minishare.sharing", ("ex01_task1", "ex01_task2")),          # an import costs every task
        (5, "minishare.functional.softmax", ("ex01_task1",)),
        (8, "eval", ("ex01_task2",)),
        (8, "minishare.sharing.assign", ("ex01_task2",))]


def test_shares_add_up_to_the_points_exactly():
    for points, n in ((2, 3), (3, 7), (4, 6), (1, 9), (0.5, 3)):
        shares = grade.split(points, n)
        assert len(shares) == n and sum(shares) == points            # floating point, exactly
        assert max(shares) - min(shares) <= 1 / 1024
    everything = [s for points, n in ((2, 3), (3, 7), (4, 6), (1, 9)) * 20 for s in grade.split(points, n)]
    assert sum(everything) == 20 * (2 + 3 + 4 + 1)


# ---------------------------------------------------------------------------- release
@numpy_run_only
def test_release_strips_solutions_hidden_cases_mutants_answers_and_the_teachers_section(tmp_path):
    root = make_tree(tmp_path / "src")
    release.release(root, tmp_path / "out")
    out = tmp_path / "out" / "ex01_toy"
    assert sorted(os.listdir(out)) == ["README.md", "expected.json", "test_ex01_toy.py", "toy.py"]
    assert "NotImplementedError" in (out / "toy.py").read_text()
    assert "negative" not in (out / "test_ex01_toy.py").read_text()
    assert json.loads((out / "expected.json").read_text()) == {"reference": {"test_double": 6, "test_square": 9},
                                                               "given": {}}
    readme = (tmp_path / "out" / "README.md").read_text()
    assert "Run pytest" in readme and "teachers" not in readme and "Secrets" not in readme
    with pytest.raises(FileExistsError):
        release.release(root, tmp_path / "out")


@numpy_run_only
def test_the_competitions_folder_goes_out_with_every_release_without_its_teachers_section(tmp_path):
    """``golf/`` is not in the table (check and grade never read it) but is handed out: its README
    up to the section for teachers, and its starter entry as it is, in a whole or a partial release."""
    root = make_tree(tmp_path / "src")
    golf = root / release.COMPETITION
    golf.mkdir()
    (golf / "README.md").write_text("# Golf\n\nThe rules.\n\n## For teachers\n\nThe timeout.\n")
    (golf / "entry.json").write_text('{"name": "starter"}\n')
    assert [e.folder for e in catalog.load(root)] == ["ex01_toy"]
    for out, only in ((tmp_path / "all", None), (tmp_path / "some", ["ex01"])):
        release.release(root, out, only=only)
        assert sorted(os.listdir(out / "golf")) == ["README.md", "entry.json"]
        assert (out / "golf" / "README.md").read_text() == "# Golf\n\nThe rules.\n"
        assert (out / "golf" / "entry.json").read_text() == '{"name": "starter"}\n'


@numpy_run_only
def test_the_real_release_holds_no_given_function_and_its_visible_cases_pass_on_the_solutions(tmp_path):
    """At home, with the solutions pasted in, every visible case passes: its inputs come from
    expected.json, since the release leaves the given functions (and what only they use) behind."""
    out = tmp_path / "release"
    release.release(REAL, out)
    assert "def decoder_mask" not in (out / "ex03_attention" / "test_ex03_attention.py").read_text()
    # the NumPy references that compute a task's answer stay with the hidden cases (a visible judge
    # compares with ref): in a released test file, a student could copy them
    answers = ("np_softmax", "np_layer_norm", "np_rms_norm", "reference_attention", "reference_gqa",
               "forward_numpy", "logits_numpy", "head_numpy", "best_of_rule", "cue_values",
               "reference_transitions", "adam_by_hand", "t2t_signal", "universal_numpy", "t_closed_form",
               "schedule_reference", "iterate_numpy", "np_lora", "judge_svd", "route_numpy", "capacity_reference")
    shipped = "".join(path.read_text() for path in out.glob("ex*/test_*.py"))
    assert [name for name in answers if f"def {name}(" in shipped] == []
    for exercise in catalog.load(REAL):
        assert ".given" not in next((out / exercise.folder).glob("test_*.py")).read_text()
        for relative in exercise.edit:
            shutil.copy(os.path.join(REAL, exercise.folder, relative), out / exercise.folder / relative)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=out,
                          env=terminal_environment(), capture_output=True, text=True)
    assert done.returncode == 0 and " passed" in done.stdout and "failed" not in done.stdout, done.stdout[-3000:]


@numpy_run_only
def test_a_student_runs_one_task_in_the_release_against_the_expected_data(tmp_path):
    release.release(make_tree(tmp_path / "src"), tmp_path / "out")
    toy = tmp_path / "out" / "ex01_toy" / "toy.py"
    toy.write_text(toy.read_text().replace('raise NotImplementedError("ex01 task 2")', "return x + x"))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "ex01_task2"],
                          cwd=tmp_path / "out", env=terminal_environment(), capture_output=True, text=True)
    assert "1 failed, 1 deselected" in done.stdout and "6, expected 9" in done.stdout
    assert "Warning" not in done.stdout + done.stderr


# ---------------------------------------------------------------------------- check
@numpy_run_only
def test_check_passes_a_sound_tree_and_counts_the_mutants(tmp_path):
    said = []
    assert check.check(make_tree(tmp_path / "src"), say=said.append) == []
    assert said[0].startswith("checked 1 exercises, 2 tasks, 3 cases (2 visible, 1 hidden), 2 mutants")
    assert any("ex01_task2" in line and "mutants caught 1/1" in line for line in said)


@numpy_run_only
def test_check_names_each_kind_of_problem(tmp_path):
    student = STUDENT.replace("return 2 * x", "return 2 * x  # the answer, pasted")
    tests = CASES.replace('@case("ex01_task2")\ndef test_square', '@case("ex01_task2", timeout=5)\ndef test_square') \
                 .replace("assert out == 6, out", "assert out == 7, out") \
                 .replace('"ex01_task2", timeout=2', '"ex01_task9", timeout=2')
    mutants = {"task2_abs.py": '"""Right for x >= 0 only."""\n\n\ndef square(x):\n    return x * abs(x)\n'}
    root = make_tree(tmp_path / "src", student=student, tests=tests, mutants=mutants,
                     readme="# Toy\n\n    return 2 * x  # the answer, pasted\n")
    text = "\n".join(check.check(root, say=lambda _: None))
    assert "test_double fails on the solutions" in text                               # (2)
    assert "case test_square_of_a_negative_number has task ex01_task9" in text        # (1)
    assert "ex01_task1: no mutant" in text                                            # (1)
    assert "mutants/task2_abs.py: keeps full marks on ex01_task2" in text             # (4)
    assert "README.md: holds a line of a solution" in text                            # (5)


# ---------------------------------------------------------------------------- grade
@numpy_run_only
def test_grade_scores_a_flat_upload_and_writes_gradescope_json(tmp_path):
    root = make_tree(tmp_path / "src")
    (tmp_path / "flat").mkdir()
    (tmp_path / "flat" / "toy.py").write_text("def double(x):\n    return 2 * x\n\ndef square(x):\n    return 0\n")
    rows, table, notes = grade.grade(root, tmp_path / "flat", tmp_path / "results.json", allow_root=True)
    assert scores(rows) == {"test_double": 2.0, "test_square": 0.0, "test_square_of_a_negative_number": 0.0}
    assert ["total", "1/3", "2.00", "/", "6"] in [line.split() for line in table.splitlines()]
    assert "ex01_toy/answer.txt: not in the submission" in notes
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["score"] == 2.0 and "answer.txt: not in the submission" in results["output"]
    assert {t["visibility"] for t in results["tests"]} == {"visible", "after_published"}
    assert sum(t["max_score"] for t in results["tests"]) == 6


@numpy_run_only
def test_a_looping_or_crashing_submission_loses_only_those_cases(tmp_path):
    root = make_tree(tmp_path / "src")
    sub = submit(tmp_path, "toy.py", '''\
        def double(x):
            while True:
                pass

        def square(x):
            if x < 0:
                raise SystemExit(3)
            return x * x
        ''')
    rows, _, _ = grade.grade(root, sub, allow_root=True)
    result = {r["name"]: r for r in rows}
    assert result["test_double"]["score"] == 0 and "longer than 20 s" in result["test_double"]["output"]
    assert result["test_square"]["score"] == 2.0
    assert result["test_square_of_a_negative_number"]["score"] == 0


@numpy_run_only
def test_command_line_reports_bad_input_in_one_line(tmp_path, capsys):
    assert main(["--source", str(tmp_path), "check"]) == 1
    assert "no exercises table" in capsys.readouterr().err
    assert main(["--source", str(make_tree(tmp_path / "src")), "grade", str(tmp_path / "missing")]) == 1
    assert "is not a folder" in capsys.readouterr().err
    assert main(["--source", str(tmp_path / "src"), "grade", str(tmp_path), "--only", "ex09"]) == 1
    assert "no exercise ex09" in capsys.readouterr().err


@numpy_run_only
def test_batch_writes_a_csv_and_a_results_json_each(tmp_path, capsys):
    root = make_tree(tmp_path / "src")
    for name, body in (("ada", "return 2 * x"), ("bob", "return 0")):
        submit(tmp_path / name, "toy.py", f"def double(x):\n    {body}\n\ndef square(x):\n    return x * x\n")
        shutil.move(str(tmp_path / name / "sub"), str(tmp_path / "all" / name))
    assert main(["--source", str(root), "batch", str(tmp_path / "all"), "--out", str(tmp_path / "grades"),
                 "--allow-root"]) == 0
    lines = (tmp_path / "grades" / "scores.csv").read_text().splitlines()
    missing = "ex01_toy/answer.txt: not in the submission"
    assert lines == ["submission,ex01_task1,ex01_task2,total,notes", f"ada,2,4,6,{missing}", f"bob,0,4,4,{missing}"]
    assert json.loads((tmp_path / "grades" / "bob" / "results.json").read_text())["score"] == 4


# ---------------------------------------------------------------------------- attacks, on the real tree
REAL = catalog.default_root()


@pytest.fixture(scope="module")
def handout(tmp_path_factory):
    """The release of ex05 and ex02, as a student gets it."""
    out = tmp_path_factory.mktemp("handout") / "release"
    release.release(REAL, out, only=["ex05", "ex02"])
    return out


def attack(tmp_path, handout, code, exercise="ex05_sharing_assign", module="assign.py", solve=False):
    """The student's copy of ``module`` (the stub, or the solution with ``solve``) with ``code``
    appended, graded; returns the rows of that exercise."""
    source = os.path.join(REAL if solve else handout, exercise, module)
    with open(source, encoding="utf-8") as f:
        text = f.read()
    sub = submit(tmp_path, module, text + "\n\n" + textwrap.dedent(code), folder=exercise)
    rows, _, _ = grade.grade(REAL, sub, tmp_path / "results.json", only=[exercise[:4]], allow_root=True)
    return rows


@numpy_run_only
def test_the_untouched_release_scores_zero_and_the_solutions_full_marks(tmp_path, handout):
    rows, _, _ = grade.grade(REAL, handout, only=["ex05", "ex02"], allow_root=True)
    assert rows and sum(r["score"] for r in rows) == 0
    rows, _, _ = grade.grade(REAL, REAL, only=["ex05", "ex02"], allow_root=True)
    assert all(r["passed"] for r in rows), [r["output"] for r in rows if not r["passed"]][:1]
    assert sum(r["score"] for r in rows) == pytest.approx(sum(e.points for e in catalog.load(REAL) if e.id in ("ex05", "ex02")))


@numpy_run_only
def test_forged_outcomes_score_zero(tmp_path, handout):
    """Today's attack: appended lines that mark every test passed. Outcomes no longer exist in the
    submission's process; so it forges what it can: data records on the worker's pipe, and the
    judges' helpers in its own copy of the library."""
    rows = attack(tmp_path, handout, '''\
        import json, os
        import minishare.grader.cases as c
        c.same = lambda *a, **k: None
        for fd in range(3, 12):
            for name in ("test_sequence_worked_example", "test_cycle_worked_example"):
                try:
                    os.write(fd, (json.dumps({"begin": name}) + "\\n" + json.dumps({"end": name, "data": 0}) + "\\n").encode())
                except OSError:
                    pass
        ''')
    assert sum(r["score"] for r in rows) == 0
    assert "uses minishare.grader" in rows[0]["output"] or "os.write" in rows[0]["output"]


@numpy_run_only
def test_forged_data_alone_still_scores_zero(tmp_path, handout):
    """Without the static reading (a name it cannot see), forged records still carry only data, and
    data is judged here: a made-up answer is judged wrong."""
    rows = attack(tmp_path, handout, '''\
        def sequence(N, M):
            return [0] * N
        ''')
    assert sum(r["score"] for r in rows if r["task"] == "ex05_task1") == 0


@numpy_run_only
def test_a_rewritten_results_json_and_a_detached_process_are_refused(tmp_path, handout):
    results = tmp_path / "results.json"
    rows = attack(tmp_path, handout, f'''\
        def sequence(N, M):
            with open({str(results)!r}, "w") as f:
                f.write('{{"score": 999}}')
            return [0] * N

        def cycle(N, M):
            import os
            if os.fork() == 0:
                os.setsid()
            return [0] * N
        ''', solve=True)
    assert json.loads(results.read_text())["score"] < 999
    out = {r["name"]: r["output"] for r in rows}
    assert all(r["score"] == 0 for r in rows if r["task"] in ("ex05_task1", "ex05_task2"))
    assert "does not let a submission write" in out["test_sequence_worked_example"] or \
        "uses open" in out["test_sequence_worked_example"]
    assert "os.fork" in out["test_cycle_worked_example"]
    assert all(r["passed"] for r in rows if r["task"] == "ex05_task3")      # the rest still counts


@numpy_run_only
def test_reading_or_importing_the_teachers_files_is_refused(tmp_path, handout):
    solution = os.path.join(REAL, "ex05_sharing_assign", "assign.py")
    rows = attack(tmp_path, handout, f'''\
        def sequence(N, M):
            return open({solution!r}).read()

        import ex05_sharing_assign.assign as teacher

        def cycle(N, M):
            return teacher.cycle(N, M)
        ''')
    assert sum(r["score"] for r in rows) == 0
    out = " ".join(r["output"] for r in rows)
    assert "uses open" in out and "uses ex05_sharing_assign.assign" in out


@numpy_run_only
def test_the_librarys_own_answer_scores_zero_on_that_task(tmp_path, handout):
    rows = attack(tmp_path, handout, '''\
        from minishare import sharing

        def cycle(N, M):
            return list(sharing.assign("cycle", N, M))
        ''', solve=True)
    assert all(r["score"] == 0 for r in rows)          # an import at the top serves every task
    assert "uses minishare.sharing" in rows[0]["output"]


@numpy_run_only
def test_reaching_the_library_through_an_object_trips_at_run_time(tmp_path, handout):
    """What reading cannot resolve (a name built at run time) the worker's tripwire catches."""
    rows = attack(tmp_path, handout, '''\
        import minishare

        def cycle(N, M):
            models = getattr(minishare, "mod" + "els")    # names reading cannot resolve
            config = models.TransformerConfig(vocab_size=8, embedding_size=8, hidden_size=8,
                                              num_attention_heads=1, intermediate_size=8,
                                              num_hidden_layers=N, num_unique_layers=M, sharing="cycle")
            plan = getattr(config, "pl" + "an")()
            return [plan.index("attention", i) for i in range(N)]
        ''', solve=True)
    task2 = {r["name"]: r for r in rows if r["task"] == "ex05_task2"}
    assert task2["test_cycle_worked_example"]["score"] == 0
    assert "called (assign.py)" in task2["test_cycle_worked_example"]["output"]     # the tripwire, not only the scan
    assert all(r["passed"] for r in rows if r["task"] == "ex05_task1")


@numpy_run_only
def test_hidden_cases_cannot_leak_into_visible_output(tmp_path, handout):
    """A function that dumps all it can find into its error message: the visible worker never had
    the hidden cases, and the files it could read them from are out of reach."""
    rows = attack(tmp_path, handout, '''\
        import traceback

        def sequence(N, M):
            raise RuntimeError(repr(traceback.format_stack()) + repr(dir()))
        ''')
    hidden = release.hidden_names(REAL, catalog.load(REAL))[os.path.join("ex05_sharing_assign", "test_ex05_assign.py")]
    visible_output = " ".join(r["output"] for r in rows if not r["hidden"])
    assert hidden and not any(name in visible_output for name in hidden)


@numpy_run_only
def test_patching_a_checker_does_not_help(tmp_path, handout):
    rows = attack(tmp_path, handout, '''\
        import numpy
        numpy.testing.assert_allclose = lambda *a, **k: None
        numpy.isclose = lambda *a, **k: numpy.True_
        numpy.array_equal = lambda *a, **k: True

        def sequence(N, M):
            return [0] * N
        ''')
    assert sum(r["score"] for r in rows) == 0


@numpy_run_only
def test_an_exponential_backward_loses_its_task(tmp_path, handout):
    """Exercise 2: a walk that follows every path instead of visiting each node once is right on
    small graphs and takes 2^depth steps on a graph whose nodes are used twice."""
    rows = attack(tmp_path, handout, '''\
        def backward(root, grad, inputs):
            wanted = {id(x) for x in inputs}

            def visit(node, g):
                if node._ctx is None:
                    if id(node) in wanted:
                        node.grad = g.copy() if node.grad is None else node.grad + g
                    return
                for parent, pg in zip(node._ctx.inputs, node._ctx.backward(g)):
                    if pg is not None and parent.requires_grad:
                        visit(parent, pg)
            visit(root, grad)
        ''', exercise="ex02_shared_gradients", module="engine.py", solve=True)
    task2 = [r for r in rows if r["task"] == "ex02_task2"]
    assert any(not r["passed"] for r in task2) and sum(r["score"] for r in task2) < 4


# ---------------------------------------------------------------------------- Gradescope
@numpy_run_only
def test_gradescope_zip_holds_the_scripts_and_no_mutants(tmp_path):
    path = gradescope.build(make_tree(tmp_path / "src"), tmp_path / "autograder.zip")
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        run = z.read("run_autograder").decode()
    assert {"setup.sh", "run_autograder", "exercises/points.json", "exercises/ex01_toy/toy.py",
            "minishare/grader/worker.py", "pyproject.toml"} <= set(names)
    assert not any("mutants" in n for n in names)
    assert "MINISHARE_GRADER_USER=student" in run and "results/results.json" in run


# ---------------------------------------------------------------------------- the worker alone
@numpy_run_only
def test_the_workers_guards_hold_without_the_static_reading(tmp_path):
    """What the audit hook and the private library copy refuse, for code the scan never read."""
    root = make_tree(tmp_path / "src")
    attempts = {
        "read a teacher file": f"open({str(root / 'ex01_toy' / 'toy.py')!r}).read()",
        "import a solution": "__import__('ex01_toy.toy')",
        "import the teacher tree": "__import__('exercises')",
        "start a process": "__import__('subprocess').run(['true'])",
        "fork": "__import__('os').fork()",
        "write outside scratch": f"open({str(tmp_path / 'planted.txt')!r}, 'w')",
        "compile a string": "eval(compile('6', 'x', 'eval'))",
        "compile through the standard library": "__import__('timeit').timeit('6', number=1)",
        "socket": "__import__('socket').socket()",
    }
    toy = "def double(x):\n    return ATTEMPT\n\ndef square(x):\n    return x * x\n"
    with sandbox_for(root) as box:
        for what, code in attempts.items():
            result = box.run({"toy.py": toy.replace("ATTEMPT", code).encode()}, str(root / "ex01_toy" / "test_ex01_toy.py"),
                             ["test_double"], ["toy"], {}, [], {"test_double": 10})
            record = result.records["test_double"]
            assert "error" in record, (what, record)
            assert any(word in record["error"] for word in ("does not let", "No module named")), (what, record)
    assert not (tmp_path / "planted.txt").exists()


@numpy_run_only
def test_a_forbidden_call_trips_only_from_the_submission_and_only_in_its_task(tmp_path):
    root = make_tree(tmp_path / "src")
    toy = ("import minishare\n\ndef double(x):\n    return float(minishare.tensor(x).sum().item())\n\n"
           "def square(x):\n    return float(minishare.tensor(x).sum().item()) ** 2\n")
    with sandbox_for(root) as box:
        result = box.run({"toy.py": toy.encode()}, str(root / "ex01_toy" / "test_ex01_toy.py"),
                         ["test_double", "test_square"], ["toy"], {"minishare.tensor.Tensor.sum": ["ex01_task2"]}, [],
                         {"test_double": 10, "test_square": 10})
    assert result.records["test_double"]["data"] == 3.0                     # task 1 may use it
    assert "ForbiddenUse" in result.records["test_square"]["error"]
    assert result.records["test_square"]["breaches"] == ["minishare.tensor.Tensor.sum called (toy.py)"]


def sandbox_for(root):
    from minishare.grader import sandbox
    return sandbox.Sandbox(deny=[str(root)], allow_root=True)


@numpy_run_only
def test_check_names_a_forbidden_name_the_library_does_not_have(tmp_path):
    root = make_tree(tmp_path / "src")
    table = json.loads((root / "points.json").read_text())
    table["ex01"]["forbid"] = ["minishare.no_such_module.thing"]
    (root / "points.json").write_text(json.dumps(table))
    problems = check.check_structure(root, [suites.load_suite(root, catalog.load(root)[0])])
    assert problems == ["ex01: forbid names minishare.no_such_module.thing, which the library does not have "
                        "(renamed?): nothing would stop its use"]


@numpy_run_only
def test_a_forbidden_import_is_refused_to_the_submission_not_to_the_library(tmp_path):
    root = make_tree(tmp_path / "src")
    direct = "def double(x):\n    import minishare.sharing\n    return 6\n\ndef square(x):\n    return x * x\n"
    through = "def double(x):\n    import minishare.models\n    return 6\n\ndef square(x):\n    return x * x\n"
    with sandbox_for(root) as box:
        records = [box.run({"toy.py": text.encode()}, str(root / "ex01_toy" / "test_ex01_toy.py"), ["test_double"],
                           ["toy"], {}, ["minishare.sharing"], {"test_double": 10}).records["test_double"]
                   for text in (direct, through)]
    assert "may not be imported" in records[0]["error"] and records[0]["breaches"] == ["import of minishare.sharing refused"]
    assert records[1] == {"data": 6, "breaches": []}        # minishare.models imports minishare.sharing itself
