"""The classroom tool (``python -m minishare.exercises``): regions, release, check and grade.

A tiny exercise tree written here exercises each rule (and each way an assignment set can be
unsound); the real ``exercises/`` is released and graded as shipped: the untouched release scores
0 on every task, the solutions full marks. Grading runs pytest in subprocesses on NumPy whatever
the backend, so the strict-backend run of the suite skips the slow real-tree test.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from minishare import backend
from minishare.exercises import catalog, check, grade, regions, release, runner
from minishare.exercises.__main__ import main

# The tool runs exercises in pytest subprocesses on NumPy whatever the backend: under the strict
# backend those tests would repeat the NumPy run exactly, so they run once.
numpy_run_only = pytest.mark.skipif(backend.name == "strict", reason="the exercise runner forces "
                                    "MINISHARE_BACKEND=numpy; the NumPy run of the suite covers this")

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

TESTS = '''\
import pytest
from toy import double, square


@pytest.mark.ex01_task1
def test_double():
    assert double(3) == 6


@pytest.mark.ex01_task2
def test_square():
    assert square(3) == 9


### BEGIN HIDDEN TESTS
@pytest.mark.ex01_task2
def test_square_of_a_negative_number():
    assert square(-4) == 16
### END HIDDEN TESTS
'''


def make_tree(root, student=STUDENT, tests=TESTS, readme="# Toy\n"):
    """A one-exercise tree: ex01_toy with toy.py (2 tasks), its tests, and an answer file."""
    folder = root / "ex01_toy"
    folder.mkdir(parents=True)
    (folder / "toy.py").write_text(student)
    (folder / "test_ex01_toy.py").write_text(tests)
    (folder / "README.md").write_text(readme)
    (folder / "answer.txt").write_text("the teacher's answer\n")
    table = {"ex01": {"title": "Toy", "edit": ["toy.py", "answer.txt"],
                      "tasks": {"task1": {"points": 2, "title": "double"},
                                "task2": {"points": 4, "title": "square"}}}}
    (root / "points.json").write_text(json.dumps(table))
    real = catalog.default_root()
    for name in ("conftest.py", "pytest.ini"):
        shutil.copyfile(os.path.join(real, name), root / name)
    return root


# ---------------------------------------------------------------------------- regions
def test_solution_region_becomes_a_raise_naming_the_task():
    stub = regions.strip_solutions(STUDENT, "toy.py", "ex07")
    assert 'raise NotImplementedError("ex07 task 1")' in stub
    assert 'raise NotImplementedError("ex07 task 2")' in stub
    assert "2 * x" not in stub and "SOLUTION" not in stub
    assert '"""Task 1."""' in stub                          # the docstring stays


def test_regions_outside_a_function_or_unbalanced_are_refused():
    with pytest.raises(regions.RegionError, match="inside a function body"):
        regions.strip_solutions("### BEGIN SOLUTION task 1\nX = 1\n### END SOLUTION\n", "m.py", "ex01")
    with pytest.raises(regions.RegionError, match="never closed"):
        regions.strip_solutions("def f():\n    ### BEGIN SOLUTION task 1\n    return 1\n", "m.py", "ex01")
    with pytest.raises(regions.RegionError, match="END without BEGIN"):
        regions.strip_hidden("x = 1\n### END HIDDEN TESTS\n", "t.py")
    with pytest.raises(regions.RegionError, match="malformed"):
        regions.strip_solutions("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n",
                                "m.py", "ex01")


def test_hidden_tests_are_removed_and_named():
    released = regions.strip_hidden(TESTS, "t.py")
    assert "test_square_of_a_negative_number" not in released and "def test_square():" in released
    assert regions.hidden_test_names(TESTS, "t.py") == {"test_square_of_a_negative_number"}


# ---------------------------------------------------------------------------- release
def test_release_strips_solutions_hidden_tests_and_answers(tmp_path):
    root = make_tree(tmp_path / "src")
    assert release.release(root, tmp_path / "out") == 6     # README, table, conftest, ini; stub, tests
    out = tmp_path / "out" / "ex01_toy"
    assert sorted(os.listdir(out)) == ["README.md", "test_ex01_toy.py", "toy.py"]
    assert "NotImplementedError" in (out / "toy.py").read_text()
    assert "negative" not in (out / "test_ex01_toy.py").read_text()
    with pytest.raises(FileExistsError):
        release.release(root, tmp_path / "out")


@numpy_run_only
def test_a_student_runs_one_task_in_the_release_without_marker_warnings(tmp_path):
    release.release(make_tree(tmp_path / "src"), tmp_path / "out")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "ex01_task2"],
                          cwd=tmp_path / "out", env=runner.environment(), capture_output=True, text=True)
    assert "1 failed, 1 deselected" in done.stdout and 'NotImplementedError("ex01 task 2")' in done.stdout
    assert "Warning" not in done.stdout + done.stderr


def test_table_and_folders_must_agree(tmp_path):
    root = make_tree(tmp_path / "src")
    (root / "ex02_orphan").mkdir()
    with pytest.raises(catalog.CatalogError, match="ex02_orphan/: the folder has no entry"):
        catalog.load(root)


# ---------------------------------------------------------------------------- check
@numpy_run_only
def test_check_passes_a_sound_tree_and_counts(tmp_path):
    said = []
    assert check.check(make_tree(tmp_path / "src"), timeout=20, say=said.append) == []
    assert said[0].startswith("checked 1 exercises, 2 tasks, 3 tests (2 visible, 1 hidden)")


@numpy_run_only
def test_check_names_each_kind_of_problem(tmp_path):
    student = STUDENT.replace("return x * x", "return x + x") \
                     .replace("return 2 * x", "return 2 * x  # the answer, pasted")
    tests = TESTS.replace("assert double(3) == 6", "assert True") \
                 .replace("@pytest.mark.ex01_task1", "@pytest.mark.ex01_task1\n@pytest.mark.ex01_task2")
    root = make_tree(tmp_path / "src", student=student, tests=tests,
                     readme="# Toy\n\n    return 2 * x  # the answer, pasted\n")
    text = "\n".join(check.check(root, timeout=20, say=lambda _: None))
    assert "test_square: fails on the solutions" in text                     # (1)
    assert "needs exactly one task marker" in text and "ex01_task1: no visible test" in text
    assert "test_double: passes on the stub" in text                         # (2)
    assert "README.md: holds a line of a solution" in text                   # (3)


@numpy_run_only
def test_check_catches_a_stub_that_fails_for_another_reason(tmp_path):
    tests = TESTS.replace("from toy import double, square", "from toy import double, square, cube")
    student = STUDENT + "\n\ndef cube(x):\n    return x ** 3\n"
    root = make_tree(tmp_path / "src", student=student, tests=tests)
    # the release keeps cube (no region), so everything imports; now break the import in the stub only
    root.joinpath("ex01_toy", "toy.py").write_text(student.replace(
        "def cube(x):\n    return x ** 3", "def cube(x):\n    ### BEGIN SOLUTION task 1\n    return x ** 3\n"
        "    ### END SOLUTION\n\n\nraise_at_import = double(1)"))
    problems = check.check(root, timeout=20, say=lambda _: None)
    assert any("does not collect" in p or "not the stub's NotImplementedError" in p for p in problems), problems


# ---------------------------------------------------------------------------- grade
@numpy_run_only
def test_grade_scores_a_partial_submission_and_writes_gradescope_json(tmp_path):
    root = make_tree(tmp_path / "src")
    release.release(root, tmp_path / "handout")
    toy = tmp_path / "handout" / "ex01_toy" / "toy.py"
    toy.write_text(toy.read_text().replace('raise NotImplementedError("ex01 task 1")', "return 2 * x"))
    rows, table, notes = grade.grade(root, tmp_path / "handout", tmp_path / "results.json", timeout=20)
    assert [r["score"] for r in rows] == [2.0, 0.0, 0.0]
    lines = [line.split() for line in table.splitlines()]
    assert ["ex01_task1", "1/1", "2.00", "/", "2", "double"] in lines
    assert ["total", "1/3", "2.00", "/", "6"] in lines
    assert notes == ["ex01_toy/answer.txt: not in the submission"]
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["score"] == 2.0 and len(results["tests"]) == 3
    assert {t["visibility"] for t in results["tests"]} == {"visible", "after_published"}
    assert all({"name", "score", "max_score", "output"} <= set(t) for t in results["tests"])


@numpy_run_only
def test_a_looping_or_crashing_submission_loses_only_those_tests(tmp_path):
    root = make_tree(tmp_path / "src")
    submission = tmp_path / "sub" / "ex01_toy"
    submission.mkdir(parents=True)
    submission.joinpath("toy.py").write_text(textwrap.dedent('''\
        import os

        def double(x):
            while True:
                pass

        def square(x):
            if x < 0:
                os._exit(3)
            return x * x
        '''))
    rows, _, _ = grade.grade(root, tmp_path / "sub", timeout=2)
    result = {r["nodeid"].split("::")[1]: r for r in rows}
    assert result["test_double"]["score"] == 0 and "longer than 2 s" in result["test_double"]["output"]
    assert result["test_square"]["score"] == 2.0
    assert result["test_square_of_a_negative_number"]["score"] == 0
    assert "died" in result["test_square_of_a_negative_number"]["output"]


@numpy_run_only
def test_a_submission_that_does_not_import_scores_zero_with_the_reason(tmp_path):
    root = make_tree(tmp_path / "src")
    submission = tmp_path / "sub" / "ex01_toy"
    submission.mkdir(parents=True)
    submission.joinpath("toy.py").write_text("def double(x):\n    return 2 * x\n\ndef square(x) return x\n")
    rows, table, _ = grade.grade(root, tmp_path / "sub", timeout=20)
    assert [r["score"] for r in rows] == [0, 0, 0]
    assert all("SyntaxError" in r["output"] for r in rows)
    assert ["total", "0/3", "0.00", "/", "6"] in [line.split() for line in table.splitlines()]


@numpy_run_only
def test_command_line_reports_bad_input_in_one_line(tmp_path, capsys):
    assert main(["--source", str(tmp_path), "check"]) == 1
    assert "no exercises table" in capsys.readouterr().err
    assert main(["--source", str(make_tree(tmp_path / "src")), "grade", str(tmp_path / "missing")]) == 1
    assert "is not a folder" in capsys.readouterr().err


@numpy_run_only
def test_real_exercises_release_scores_zero_and_solutions_full(tmp_path):
    root = catalog.default_root()
    exercises = catalog.load(root)
    assert len(exercises) >= 12
    release.release(root, tmp_path / "handout")
    untouched, _, _ = grade.grade(root, tmp_path / "handout", timeout=60, together=True)
    solutions, _, _ = grade.grade(root, root, timeout=60, together=True)
    for task in catalog.markers(exercises):
        assert sum(r["score"] for r in untouched if r["task"] == task) == 0, task
    assert sum(r["score"] for r in solutions) == pytest.approx(sum(e.points for e in exercises))
    assert all(r["passed"] for r in solutions)
