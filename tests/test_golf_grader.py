"""The competition's grading side (``minishare.grader.golf``): a submission is an ``entry.json`` read
as data, its value is the grader's own computation, and ``batch`` writes the leaderboard.

The values are checked against ``minishare.golf.run.grade`` run here on the declaration alone (the
core, tested by hand-worked numbers in ``test_golf``), the baselines against add-one unigram counts
taken here, and the score against thresholds stated in the test.
"""
import collections
import csv
import json
import math
import os
import zipfile

import pytest

from minishare.golf import run as golf_run
from minishare.golf.entry import parse_entry
from minishare.golf.splits import document_text
from minishare.grader import golf
from minishare.grader.__main__ import main
from test_golf import TINY, with_

TWENTY = with_("recipe", steps=20)


def submit(folder, entry, extra=None):
    """A submission folder: ``entry.json`` and ``extra`` ({relative path: text})."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "entry.json"), "w", encoding="utf-8") as f:
        json.dump(entry, f)
    for relative, text in (extra or {}).items():
        path = os.path.join(folder, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return str(folder)


def fake_outputs(marker):
    """What a submission could write or print to claim a value: a results.json and a leaderboard
    of its own, and code that prints a leaderboard line and leaves ``marker`` if it ever runs."""
    code = (f"open({str(marker)!r}, 'w').close()\n"
            "print('bits per byte: 0.0001')\n")
    fake = {"score": 10, "leaderboard": [{"name": "bits per byte", "value": 0.0001, "order": "asc"}]}
    return {"results.json": json.dumps(fake), "results/results.json": json.dumps(fake),
            "leaderboard.csv": "rank,submission,bits_per_byte\n1,me,0.0001\n", "stdout": "bits per byte: 0.0001\n",
            "sitecustomize.py": code, "conftest.py": code, "setup.py": code, "__init__.py": code,
            "minishare/golf/score.py": code}


def test_what_a_submission_writes_or_prints_cannot_change_its_value(tmp_path):
    marker = tmp_path / "ran"
    plain = submit(tmp_path / "plain", TINY)
    loud = submit(tmp_path / "loud", TINY, fake_outputs(marker))
    expected = golf_run.grade(parse_entry(TINY), "test")["bits_per_byte"]     # the declaration alone
    floors = golf.baselines()
    for folder in (plain, loud):
        row, problem = golf.grade_submission(folder)
        assert problem is None and row["bits_per_byte"] == expected
        board = golf.results(row, problem, floors)["leaderboard"]
        assert board[0] == {"name": "bits per byte", "value": expected, "order": "asc"}
    assert expected != 0.0001 and not marker.exists()      # nothing of the submission ran


def test_the_command_writes_the_graders_value_over_a_results_json_in_the_upload(tmp_path, capsys):
    folder = submit(tmp_path / "sub", TINY, fake_outputs(tmp_path / "ran"))
    out = tmp_path / "results.json"
    assert main(["grade", "--golf", folder, "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["leaderboard"][0]["value"] == golf_run.grade(parse_entry(TINY), "test")["bits_per_byte"]
    assert "0.0001" not in capsys.readouterr().out and not (tmp_path / "ran").exists()


def test_the_same_submission_and_seed_give_the_same_value_twice(tmp_path):
    folder = submit(tmp_path / "sub", TINY)
    first, again = (golf.grade_submission(folder)[0]["bits_per_byte"] for _ in range(2))
    assert first == again


@pytest.mark.parametrize("layout, words", [
    ({}, "holds exactly one entry.json; found 0"),
    ({"entry.json": "{}", "a/entry.json": "{}"}, "found 2 (a/entry.json, entry.json)"),
])
def test_a_submission_needs_exactly_one_entry(tmp_path, layout, words):
    folder = tmp_path / "sub"
    folder.mkdir()
    for relative, text in layout.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(text)
    row, problem = golf.grade_submission(str(folder))
    assert row is None and words in problem and "\n" not in problem


def test_an_entry_below_the_top_is_found_and_a_symlink_is_refused(tmp_path):
    below = submit(tmp_path / "zipped" / "my-entry", TINY)
    assert golf.find_entry(str(tmp_path / "zipped")) == os.path.join(below, "entry.json")
    secret = tmp_path / "teacher.json"
    secret.write_text(json.dumps(TINY))
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / "entry.json").symlink_to(secret)
    row, problem = golf.grade_submission(str(tmp_path / "linked"))
    assert row is None and problem == "entry.json is a symlink; upload the file itself"


def test_the_baselines_are_add_one_unigram_counts_in_bits_per_byte():
    """The unigram baseline counted here: p(w) = (c(w) + 1) / (N + V) over the [SEP]-joined training
    stream, −log2 p summed over every test token after the first [SEP], over the test text's bytes."""
    parts, tokenizer = golf_run.prepare(parse_entry({}))
    sep = tokenizer.sep_id

    def stream(documents):
        return [sep] + [i for d in documents for i in tokenizer.encode(document_text(d)) + [sep]]
    train, test = stream(parts["train"]), stream(parts["test"])
    counts, V = collections.Counter(train), tokenizer.vocab_size
    bits = -sum(math.log2((counts[w] + 1) / (len(train) + V)) for w in test[1:])
    n_bytes = sum(len(document_text(d).encode("utf-8")) + 1 for d in parts["test"])
    floors = golf.baselines()
    assert floors["unigram"] == pytest.approx(bits / n_bytes, rel=1e-9)
    assert 0 < floors["bigram"] < floors["unigram"]        # a context helps on this corpus


@pytest.mark.parametrize("bpb, points", [(2.5, 4), (2.0, 4), (1.5, 7), (1.0, 7), (0.9, 10)])
def test_the_score_is_4_valid_plus_3_a_baseline_beaten(bpb, points):
    row = {"bits_per_byte": bpb, "bytes": 100, "budget_bytes": 200}
    tests = golf.score(row, {"unigram": 2.0, "bigram": 1.0})      # strictly below a baseline to beat it
    assert sum(t[1] for t in tests) == points and sum(t[2] for t in tests) == 10


def test_a_refused_entry_scores_zero_and_is_not_on_the_leaderboard():
    doc = golf.results(None, "entry.json: unknown field hacks", {"unigram": 2.0, "bigram": 1.0})
    assert doc["score"] == 0 and "leaderboard" not in doc and doc["output"] == "entry.json: unknown field hacks"
    assert [t["max_score"] for t in doc["tests"]] == [4, 3, 3]


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_batch_writes_the_leaderboard_sorted_with_the_top_entries_on_a_second_seed(tmp_path):
    subs = tmp_path / "subs"
    submit(subs / "three", TINY)
    submit(subs / "twenty", TWENTY)
    submit(subs / "outside", with_(None, corpus="mine.txt"))
    assert main(["batch", "--golf", str(subs), "--out", str(tmp_path / "out"), "--top", "1"]) == 0
    rows = read_csv(tmp_path / "out" / "leaderboard.csv")
    assert list(rows[0]) == list(golf.COLUMNS)
    # each value is the core's run of the declaration on the test split (seed 0; the best also seed 1)
    direct = {name: golf_run.grade(parse_entry(e), "test") for name, e in (("three", TINY), ("twenty", TWENTY))}
    ranked = sorted(direct, key=lambda n: direct[n]["bits_per_byte"])
    assert ranked[0] == "twenty"                        # twenty steps learn more than three
    second = golf_run.grade(parse_entry(with_("recipe", steps=20, seed=1)), "test")
    assert [r["submission"] for r in rows] == ranked + ["outside"]
    for rank, name in enumerate(ranked, 1):
        row = next(r for r in rows if r["submission"] == name)
        assert row["rank"] == str(rank) and float(row["bits_per_byte"]) == direct[name]["bits_per_byte"]
        assert int(row["bytes"]) == direct[name]["bytes"] == 4512 and row["seed"] == "0"
        assert row["steps_done"] == str(direct[name]["steps"]) and row["score"] == "4"
    top = rows[0]
    assert float(top["bits_per_byte_second_seed"]) == second["bits_per_byte"] and top["second_seed"] == "1"
    assert rows[1]["bits_per_byte_second_seed"] == rows[1]["second_seed"] == ""          # top 1 only
    assert rows[2]["rank"] == "" and rows[2]["score"] == "0" and "corpus asks for outside data" in rows[2]["notes"]
    for name, points in (("three", 4), ("twenty", 4), ("outside", 0)):
        assert json.loads((tmp_path / "out" / name / "results.json").read_text())["score"] == points


@pytest.mark.parametrize("argv, words", [
    (["grade", "--golf", "x", "--only", "ex03"], "--only names exercises"),
    (["batch", "x", "--out", "y", "--top", "2"], "--top is for --golf only"),
    (["batch", "--golf", "x", "--out", "y", "--top", "-1"], "--top must be 0 or more"),
    (["batch", "--golf", "x", "--out", "y", "--second-seed", str(2 ** 32)], "--second-seed must be in"),
    (["grade", "x", "--draw-file", "d.json"], "--draw-file is for --golf only"),
])
def test_the_exercises_flags_and_the_competitions_do_not_mix(argv, words, capsys):
    with pytest.raises(SystemExit) as exit:
        main(argv)
    assert exit.value.code == 2 and words in capsys.readouterr().err


def test_the_golf_autograder_grades_an_entry_and_ships_no_exercises(tmp_path):
    out = tmp_path / "golf.zip"
    assert main(["gradescope", "--golf", "--out", str(out)]) == 0
    again = tmp_path / "again.zip"
    assert main(["gradescope", "--golf", "--out", str(again)]) == 0
    with zipfile.ZipFile(out) as z, zipfile.ZipFile(again) as z2:
        names = z.namelist()
        run = z.read("run_autograder").decode()
        draws = [json.loads(zip_.read("golf_draw.json"))["draw"] for zip_ in (z, z2)]
    assert {"setup.sh", "run_autograder", "pyproject.toml", "minishare/grader/golf.py", "golf_draw.json"} <= set(names)
    assert not any(n.startswith("exercises/") for n in names)
    assert "grade --golf \"$ROOT/submission\" --draw-file \"$ROOT/source/golf_draw.json\"" in run
    assert "MINISHARE_GRADER_USER=student" in run           # a code-track model.py runs as that user
    # each zip draws its own stories, never the course's public draw 0
    assert 0 not in draws and draws[0] != draws[1]
