"""A Gradescope dry run of the class competition, as ``test_gradescope_dry_run`` does the exercises':
``gradescope --golf`` unzipped into ``AUTOGRADER_ROOT/source``, ``setup.sh`` run once as root, then
``run_autograder`` on two entries of a few steps each, read back from ``results/results.json``.

Root only, like Gradescope's image (``setup.sh`` adds the system user ``student``). Each value on the
leaderboard is compared with ``minishare.golf.run.grade`` run here on the declaration alone; one
upload also carries a results.json, a leaderboard line and a ``minishare`` package of its own, none
of which may change its value. The grading time and leaderboard of each entry are printed (``pytest -s``).
"""
import json
import os
import shutil
import subprocess
import time

import pytest

from minishare import backend
from minishare.golf import run as golf_run
from minishare.golf.entry import parse_entry
from test_golf import TINY, with_
from test_golf_code import CODE_TWIN, TWIN_SOURCE
from test_golf_grader import fake_outputs
from test_gradescope_dry_run import built_autograder, environment

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(backend.name != "numpy", reason="the autograder runs in its own process on NumPy: "
                                                       "the NumPy run of the suite covers it"),
    pytest.mark.skipif(os.geteuid() != 0, reason="setup.sh and run_autograder run as root, as on Gradescope"),
]

ENTRIES = {"three steps": TINY, "twenty steps": with_("recipe", steps=20)}


@pytest.fixture(scope="module")
def autograder():
    """AUTOGRADER_ROOT after the golf zip's setup.sh."""
    yield from built_autograder("minishare-golf-autograder-", "--golf")


def run_autograder(root, files):
    """Gradescope's run of one upload ({path: text}); (results.json read, wall seconds)."""
    for name in ("submission", "results"):
        shutil.rmtree(os.path.join(root, name), ignore_errors=True)
    for relative, text in files.items():
        path = os.path.join(root, "submission", relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    start = time.perf_counter()
    run = subprocess.run([os.path.join(root, "run_autograder")], cwd=root, env=environment(root),
                         capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - start
    results = os.path.join(root, "results", "results.json")
    assert os.path.exists(results), f"no results.json (exit {run.returncode}):\n{run.stdout[-3000:]}"
    with open(results, encoding="utf-8") as f:
        return json.load(f), seconds


@pytest.mark.parametrize("label", list(ENTRIES))
def test_two_entries_get_the_graders_values_on_the_leaderboard(autograder, tmp_path, label):
    files = {"entry.json": json.dumps(ENTRIES[label]), **fake_outputs(tmp_path / "ran")}
    results, seconds = run_autograder(autograder, files)
    print(f"\n{label}: graded by run_autograder in {seconds:.1f} s; leaderboard {json.dumps(results['leaderboard'])}")
    assert set(results) == {"score", "output", "stdout_visibility", "tests", "leaderboard"}
    direct = golf_run.grade(parse_entry(ENTRIES[label]), "test", draw=zip_draw(autograder))
    assert results["leaderboard"] == [
        {"name": "bits per byte", "value": direct["bits_per_byte"], "order": "asc"},
        {"name": "bytes", "value": direct["bytes"], "order": "asc"},
        {"name": "training CPU seconds", "value": results["leaderboard"][2]["value"], "order": "asc"}]
    assert 0 <= results["leaderboard"][2]["value"] < 60
    assert [(t["score"], t["max_score"]) for t in results["tests"]][0] == (4, 4)
    assert results["score"] == sum(t["score"] for t in results["tests"]) >= 4
    assert not (tmp_path / "ran").exists()


def zip_draw(root):
    """The grammar stories' seed the zip was built with (root's alone, as setup.sh leaves it)."""
    path = os.path.join(root, "source", "golf_draw.json")
    assert os.stat(path).st_mode & 0o077 == 0, "golf_draw.json is readable by others than root"
    with open(path, encoding="utf-8") as f:
        return json.load(f)["draw"]


def test_a_code_track_entry_runs_as_student_and_matches_its_declared_twin(autograder):
    """The code track on Gradescope: model.py runs in the sandbox as ``student``; a module that
    builds the declared TINY model gets the declared entry's bits per byte and bytes plus its source."""
    results, seconds = run_autograder(autograder, {"entry.json": json.dumps(CODE_TWIN), "model.py": TWIN_SOURCE})
    print(f"\ncode track: graded by run_autograder in {seconds:.1f} s; leaderboard {json.dumps(results.get('leaderboard'))}")
    assert "leaderboard" in results, results["output"]
    direct = golf_run.grade(parse_entry(TINY), "test", draw=zip_draw(autograder))
    value, n_bytes = results["leaderboard"][0]["value"], results["leaderboard"][1]["value"]
    assert abs(value - direct["bits_per_byte"]) < 1e-6 and n_bytes == direct["bytes"] + len(TWIN_SOURCE.encode())


def test_a_refused_entry_scores_zero_with_its_reason(autograder):
    results, _ = run_autograder(autograder, {"entry.json": json.dumps(with_(None, corpus="mine.txt"))})
    assert results["score"] == 0 and "leaderboard" not in results
    assert "corpus asks for outside data" in results["output"]
