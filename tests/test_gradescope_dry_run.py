"""A Gradescope dry run, as Gradescope runs it: the autograder zip unpacked into
``AUTOGRADER_ROOT/source``, ``setup.sh`` run once as root (a virtual environment, pip, the user
``student``), then ``run_autograder`` for each submission, read back from ``results/results.json``.

Root only, like Gradescope's image: ``setup.sh`` adds the system user ``student`` to this machine
(and keeps it). Every exercise, as a class would upload it (a grade of all nineteen takes about
half a minute). An attack on the whole Gradescope path reuses the ``autograder`` fixture with
``run_autograder(root, files)`` on ``release_files(folder)`` changed as it likes.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

import pytest

from minishare import backend
from minishare.grader import catalog

SOURCE = catalog.default_root()
ONLY = ()                         # every exercise (``--only`` flags otherwise)
EXERCISES = catalog.select(catalog.load(SOURCE), ONLY)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(backend.name != "numpy", reason="the autograder runs in its own processes on NumPy: "
                                                       "the NumPy run of the suite covers it"),
    pytest.mark.skipif(os.geteuid() != 0, reason="setup.sh and run_autograder run as root, as on Gradescope"),
]


def cli(*args):
    """``python -m minishare.grader`` on this checkout's exercises, for ONLY."""
    only = [flag for e in ONLY for flag in ("--only", e)]
    run = subprocess.run([sys.executable, "-m", "minishare.grader", "--source", SOURCE, *args, *only],
                         capture_output=True, text=True)
    assert run.returncode == 0, f"{args[0]} failed:\n{run.stderr[-3000:]}"


def environment(root):
    # Gradescope's container has none of this run's switches (MINISHARE_BACKEND) nor its path
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINISHARE_") and k != "PYTHONPATH"}
    env["AUTOGRADER_ROOT"] = root
    return env


def unzip(path, folder):
    """Like ``unzip``: the modes the zip records (run_autograder must stay executable)."""
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            extracted = z.extract(info, folder)
            if info.external_attr >> 16:
                os.chmod(extracted, (info.external_attr >> 16) & 0o777)


@pytest.fixture(scope="module")
def autograder():
    """AUTOGRADER_ROOT after setup.sh: built once for the module (pip installs NumPy)."""
    yield from built_autograder("minishare-autograder-")


def built_autograder(prefix, *flags):
    """Yields AUTOGRADER_ROOT with ``gradescope *flags``'s zip unzipped into source/ and its
    setup.sh run (a fixture's body: the folder goes when the generator is closed)."""
    python_ok = os.path.exists("/usr/bin/python3") and subprocess.run(
        ["/usr/bin/python3", "-c", "import venv, ensurepip"], capture_output=True).returncode == 0
    if not python_ok and shutil.which("apt-get") is None:
        pytest.skip("/usr/bin/python3 cannot make a virtual environment and there is no apt-get to install one")
    root = tempfile.mkdtemp(prefix=prefix)
    os.chmod(root, 0o755)           # student runs root/venv's Python, as under /autograder
    try:
        cli("gradescope", *flags, "--out", os.path.join(root, "autograder.zip"))
        source = os.path.join(root, "source")
        unzip(os.path.join(root, "autograder.zip"), source)
        setup = subprocess.run(["bash", "setup.sh"], cwd=source, env=environment(root),
                               capture_output=True, text=True, timeout=900)
        assert setup.returncode == 0, f"setup.sh failed:\n{setup.stdout[-3000:]}\n{setup.stderr[-3000:]}"
        # Gradescope copies it here and runs it from here
        shutil.copy2(os.path.join(source, "run_autograder"), os.path.join(root, "run_autograder"))
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run_autograder(root, files):
    """Gradescope's run of one submission: ``files`` ({path in the upload: bytes}) as
    ``root/submission``, then ``run_autograder``; returns ``results/results.json``, read."""
    for name in ("submission", "results"):
        shutil.rmtree(os.path.join(root, name), ignore_errors=True)
    for relative, content in files.items():
        path = os.path.join(root, "submission", relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(content)
    run = subprocess.run([os.path.join(root, "run_autograder")], cwd=root, env=environment(root),
                         capture_output=True, text=True, timeout=600)
    results = os.path.join(root, "results", "results.json")
    assert os.path.exists(results), f"no results.json (exit {run.returncode}):\n{run.stderr[-3000:]}"
    with open(results, encoding="utf-8") as f:
        return json.load(f)


def solution_files():
    """The teacher's editable files of ONLY, flat, as students upload them on Gradescope."""
    files = {}
    for exercise in EXERCISES:
        for relative in exercise.edit:
            with open(os.path.join(SOURCE, exercise.folder, relative), "rb") as f:
                files[os.path.basename(relative)] = f.read()
    return files


def release_files(folder):
    """The untouched student copy of ONLY (written to ``folder``), laid out as released."""
    cli("release", "--out", str(folder))
    files = {}
    for directory, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(directory, name)
            with open(path, "rb") as f:
                files[os.path.relpath(path, folder)] = f.read()
    return files


def check_spec(results):
    """results.json holds what Gradescope's spec names, with the types it names. Exactly these
    keys: a new one is checked against the spec here first."""
    assert set(results) == {"score", "output", "stdout_visibility", "tests"}
    assert isinstance(results["score"], (int, float)) and isinstance(results["output"], str)
    assert results["stdout_visibility"] in ("hidden", "visible", "after_due_date", "after_published")
    assert results["tests"]
    for test in results["tests"]:
        assert set(test) == {"name", "score", "max_score", "output", "visibility"}, test
        assert isinstance(test["name"], str) and test["name"] and isinstance(test["output"], str)
        assert isinstance(test["score"], (int, float)) and 0 <= test["score"] <= test["max_score"]
        assert test["visibility"] in ("hidden", "visible", "after_due_date", "after_published")
    assert results["score"] == sum(t["score"] for t in results["tests"])
    assert sum(t["max_score"] for t in results["tests"]) == sum(e.points for e in EXERCISES)
    assert {t["visibility"] for t in results["tests"]} == {"visible", "after_published"}


def test_setup_leaves_a_python_the_student_runs_and_a_source_it_cannot_read(autograder):
    python = os.path.join(autograder, "venv", "bin", "python")
    points = os.path.join(autograder, "source", "exercises", "points.json")

    def as_student(code):
        return subprocess.run([python, "-c", code, points], user="student", cwd="/", capture_output=True, text=True)
    runs = as_student("import numpy, minishare")
    assert runs.returncode == 0, runs.stderr      # else the grader would refuse or run submissions as root
    reads = as_student("import sys; open(sys.argv[1])")
    assert "PermissionError" in reads.stderr, reads.stderr
    installed = subprocess.run([python, "-m", "pip", "list", "--format=json"], capture_output=True, text=True,
                               check=True).stdout
    names = {p["name"].lower() for p in json.loads(installed)}
    assert {"numpy", "pytest", "minishare"} <= names
    assert not names & {"jupyter", "notebook", "mpich", "mpi4py", "matplotlib"}   # the course's, not grading's


def test_the_solutions_score_full_marks(autograder):
    results = run_autograder(autograder, solution_files())
    check_spec(results)
    lost = [t for t in results["tests"] if t["score"] < t["max_score"]]
    assert results["score"] == sum(e.points for e in EXERCISES), lost


def test_the_untouched_release_scores_zero(autograder, tmp_path):
    results = run_autograder(autograder, release_files(tmp_path / "release"))
    check_spec(results)
    assert results["score"] == 0


def test_the_judge_as_an_oracle_appended_to_every_stub_scores_zero(autograder, tmp_path):
    """The cheat that once scored 19.11/152 on Gradescope: every stub ends with a block that looks
    for the grader's judges (by the stack, or in sys.modules) and returns what they expect."""
    with open(os.path.join(os.path.dirname(__file__), "attacks", "judge_oracle.py"), "rb") as f:
        block = f.read()
    files = {path: content + block if path.endswith(".py") and not os.path.basename(path).startswith("test_")
             else content for path, content in release_files(tmp_path / "release").items()}
    results = run_autograder(autograder, files)
    check_spec(results)
    assert results["score"] == 0, [t["name"] for t in results["tests"] if t["score"]]
