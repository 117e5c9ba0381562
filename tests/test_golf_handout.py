"""The competition's hand-out (``exercises/golf/``) says what the code does and what was measured:

- every number of its README that a result or a constant holds is read from there: the budgets
  (``golf.run``), the points and their thresholds (``grader.golf.SCORE``, the baselines of the
  reference run), and the reference entries' numbers to beat (``book/figures/golf/result.json``);
- its tables of fields name every field an entry may set, and every allowed name of the closed
  sets (precision, sharing, activation, optimizer, schedule);
- its starter ``entry.json`` is valid, within the budget, stores the bytes the README says, and is
  none of the reference designs;
- it is not an exercise of the table: the catalog does not list it and ``check`` never reads it.

The release of the folder (its README without the section for teachers) is tested with the other
release rules in ``test_exercises.py``.
"""
import dataclasses
import json
import os
import re
import statistics

import pytest

from minishare import sharing
from minishare.experiments import exp_golf
from minishare.golf import budget, entry as golf_entry, run as golf_run
from minishare.grader import catalog, golf as golf_grader, release
from minishare.nn.transformer import ACTIVATIONS
from minishare.train import OPTIMIZERS, SCHEDULES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDER = os.path.join(ROOT, "exercises", release.COMPETITION)
RESULT = os.path.join(ROOT, "book", "figures", "golf", "result.json")


def readme():
    with open(os.path.join(FOLDER, "README.md"), encoding="utf-8") as f:
        return f.read()


def students_part(text):
    return text.split(release.TEACHERS)[0]


def result():
    with open(RESULT, encoding="utf-8") as f:
        return json.load(f)["result"]


def number(text):
    return float(text.replace(",", ""))


def table_rows(text, heading):
    """{first cell: [cells]} of the first Markdown table after the line starting with ``heading``."""
    after = text.split(heading, 1)[1]
    rows = {}
    for line in after.splitlines()[1:]:
        if rows and not line.startswith("|"):
            break
        if line.startswith("|") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows[cells[0]] = cells[1:]
    return rows


def test_the_numbers_to_beat_are_the_reference_runs():
    rows, res = table_rows(readme(), "## The numbers to beat"), result()
    designs = [d for d in res["rows"]]
    assert set(designs) | {"unigram counts", "bigram counts"} == set(rows) - {"reference"}, sorted(rows)
    for design in designs:
        _model, steps, stored, cpu, bpb = rows[design]
        int8 = res["rows"][design]["int8"]
        values = [r["bits_per_byte"] for r in int8]
        assert number(steps) == res["steps"][design], design
        assert number(stored) == int8[0]["bytes"] == budget.entry_bytes(
            exp_golf.entry(design, 1, 0, "int8"), 256), design
        assert cpu == f"{statistics.mean(r['train_cpu_seconds'] for r in int8):.1f}", design
        assert bpb == f"{statistics.mean(values):.3f}; {min(values):.3f} to {max(values):.3f}", design
    # the table is sorted best first, as a leaderboard is
    means = [statistics.mean(r["bits_per_byte"] for r in res["rows"][d]["int8"]) for d in designs]
    assert [d for d in rows if d in designs] == [d for _, d in sorted(zip(means, designs))]
    for name in ("unigram", "bigram"):
        assert rows[f"{name} counts"][-1] == f"{res['baselines'][name]:.3f}", name
    assert all(res["rows"][d]["float32"][0]["bytes"] > golf_run.BUDGET_BYTES for d in designs), \
        "the README says that no reference design fits at float32"


def test_the_seed_spreads_quoted_for_teachers_are_the_reference_runs():
    res = result()
    spread = {d: max(r["bits_per_byte"] for r in rows["int8"]) - min(r["bits_per_byte"] for r in rows["int8"])
              for d, rows in res["rows"].items()}
    widest = max(spread, key=spread.get)
    up_to = re.search(r"moved by up to ([\d.]+) between seeds \(the (\w[\w-]*) design\) and by\s+at most ([\d.]+) "
                      r"for the others", " ".join(readme().split()))
    assert up_to, "the teachers' section no longer quotes the seed spreads"
    assert (up_to.group(1), up_to.group(2)) == (f"{spread[widest]:.2f}", widest)
    assert up_to.group(3) == f"{max(v for d, v in spread.items() if d != widest):.3f}"


def test_the_budgets_and_the_points_are_the_graders():
    text = readme()
    budgets = table_rows(text, "## The three budgets")
    assert budgets["bytes"][0] == f"{golf_run.BUDGET_BYTES:,} bytes ({golf_run.BUDGET_BYTES >> 10} KiB)"
    assert budgets["compute"][0] == f"{golf_run.CPU_SECONDS:g} CPU seconds of one core"
    points = list(table_rows(text, "## The score").values())[1:]
    floors = result()["baselines"]
    assert [(int(p), t) for p, t in points] == [
        (points_, "none" if baseline is None else f"{floors[baseline]:.3f}")
        for _, points_, baseline in golf_grader.SCORE]
    assert f"The points ({sum(p for _, p, _ in golf_grader.SCORE)} in all)" in text
    limits = " ".join(text.split())
    assert f"2·10¹⁰ multiply-accumulates or 2²⁸ activation values" in limits
    assert golf_entry.MAX_STEP_MACS == 2 * 10 ** 10 and golf_entry.MAX_STEP_FLOATS == 2 ** 28


def test_the_tables_name_every_field_and_every_allowed_name():
    text = students_part(readme())
    fields = {m.group(1) for m in re.finditer(r"^\| `(\w+)` \|", text, re.M)}
    expected = set(golf_entry.TOP_FIELDS) | set(golf_entry.MODEL_FIELDS) | set(golf_entry.GOLF_FIELDS) \
        | set(golf_entry.RECIPE_DEFAULTS)
    assert fields == expected, f"missing {sorted(expected - fields)}, unknown {sorted(fields - expected)}"
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)` \| (.*) \|$", text, re.M)}
    for field, names in (("precision", golf_entry.PRECISIONS), ("sharing", sharing.STRATEGIES),
                         ("hidden_act", ACTIVATIONS), ("optimizer", OPTIMIZERS), ("schedule", SCHEDULES)):
        quoted = set(re.findall(r'`"([\w-]+)"`', rows[field].rsplit("|", 1)[0]))
        assert quoted == set(names), f"{field}: the README allows {sorted(quoted)}, the code {sorted(names)}"
    defaults = {"optimizer": '`"adamw"`', "lr": "0.001", "weight_decay": "0.01", "schedule": '`"linear"`',
                "max_grad_norm": "1.0", "batch_size": "16", "seq_len": "64", "steps": "300", "seed": "0"}
    for field, shown in defaults.items():
        assert rows[field].rsplit("| ", 1)[1] == shown, field
        assert json.dumps(golf_entry.RECIPE_DEFAULTS[field]) == shown.strip("`"), field


def test_the_starter_is_valid_within_the_budget_and_none_of_the_references():
    path = os.path.join(FOLDER, "entry.json")
    starter = golf_entry.load_entry(path)
    text = " ".join(students_part(readme()).split())
    stored = budget.check_budget(starter, starter.model["vocab_size"], golf_run.BUDGET_BYTES)
    assert f"{stored:,} bytes of {golf_run.BUDGET_BYTES:,}" in text and starter.precision == "float16"
    for precision, words in (("float32", "at `float32` it would need {:,} and be refused"),
                             ("int8", "at `int8`, {:,}")):
        count = budget.entry_bytes(dataclasses.replace(starter, precision=precision), 256)
        assert words.format(count) in text, precision
    assert budget.entry_bytes(dataclasses.replace(starter, precision="float32"), 256) > golf_run.BUDGET_BYTES
    assert f"trained for {starter.recipe['steps']} steps" in text
    with open(path, encoding="utf-8") as f:
        declared = json.load(f)["model"]
    for design, model in exp_golf.DESIGNS.items():
        assert {**exp_golf.BASE, **model} != declared, f"the starter is the reference design {design}"
    examples = os.path.join(ROOT, "minishare", "golf", "examples")
    for name in os.listdir(examples):
        with open(os.path.join(examples, name), encoding="utf-8") as f:
            assert json.load(f)["model"] != declared, f"the starter is the example {name}"


def test_the_competition_is_not_an_exercise_of_the_table():
    assert os.path.isdir(FOLDER) and not catalog.EXERCISE_ID.match(release.COMPETITION[:4])
    exercises = catalog.load(os.path.join(ROOT, "exercises"))
    assert all(e.folder != release.COMPETITION for e in exercises)
    with open(os.path.join(ROOT, "exercises", catalog.TABLE), encoding="utf-8") as f:
        assert release.COMPETITION not in json.load(f)


@pytest.mark.parametrize("where", ["exercises/README.md", "README.md"])
def test_the_course_lists_the_hand_out(where):
    with open(os.path.join(ROOT, where), encoding="utf-8") as f:
        text = f.read()
    assert "golf/README.md" in text, f"{where} does not point at the competition's hand-out"
