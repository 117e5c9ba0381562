"""Automated checks of the open exercise 14: the budget is met and used, the plan is valid and
shares, the curve file holds real measurements of the chosen design and of alternatives of the same
budget over several seeds, and a defence is written. Whether the defence convinces is the
teacher's call (the rubric is in README.md)."""
import json
import math
import os
import re

import pytest

import minishare
from minishare.models import TransformerConfig
from budget_plan import BUDGET, alternatives, design, measure

HERE = os.path.dirname(os.path.abspath(__file__))


def curve():
    path = os.path.join(HERE, "curve.json")
    assert os.path.exists(path), "curve.json is missing: run `python budget_plan.py`"
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def as_json(config):
    return json.loads(json.dumps(config.to_dict()))


@pytest.mark.ex14_task1
def test_design_meets_and_uses_the_budget_and_shares():
    config = design(BUDGET)
    assert isinstance(config, TransformerConfig) and config.vocab_size == 13
    count = minishare.count_parameters(config)
    assert 0.9 * BUDGET <= count <= BUDGET, f"{count:,} parameters for a budget of {BUDGET:,}"
    plan = config.plan()
    assert any(plan.n_sets(c) < plan.n_layers for c in ("attention", "ffn")), "the plan shares nothing"


@pytest.mark.ex14_task2
def test_alternatives_are_within_the_budget_and_differ():
    mine = as_json(design(BUDGET))
    others = alternatives(BUDGET)
    assert others, "compare with at least one alternative"
    for name, config in others.items():
        assert minishare.count_parameters(config) <= BUDGET, name
        assert as_json(config) != mine, name


@pytest.mark.ex14_task2
def test_curve_file_measures_the_design_and_its_alternatives():
    mine = as_json(design(BUDGET))
    data = curve()
    assert data["budget"] == BUDGET and data["task"] == "reverse"
    designs = data["designs"]
    assert len(designs) >= 2 and designs[0]["config"] == mine, "the first design must be design(BUDGET)"
    assert len({json.dumps(d["config"], sort_keys=True) for d in designs}) == len(designs)
    for d in designs:
        assert d["parameters"] == minishare.count_parameters(TransformerConfig(**d["config"])) <= BUDGET, d["name"]
        seeds = [run["seed"] for run in d["runs"]]
        assert len(set(seeds)) >= 2, f"{d['name']}: measure at least two seeds"
        for run in d["runs"]:
            assert len(run["step"]) == len(run["loss"]) >= 20
            assert run["step"] == sorted(set(run["step"]))
            assert all(math.isfinite(v) for v in run["loss"]) and math.isfinite(run["eval_loss"])
            assert sum(run["loss"][-10:]) < sum(run["loss"][:10]), f"{d['name']} seed {run['seed']} did not train"


@pytest.mark.ex14_task3
def test_defense_is_written_and_cites_the_measured_design():
    count = minishare.count_parameters(design(BUDGET))
    path = os.path.join(HERE, "DEFENSE.md")
    assert os.path.exists(path), "DEFENSE.md is missing"
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert len(text.split()) >= 150, "the defence needs at least 150 words"
    assert re.search(rf"\b{count:,}\b|\b{count}\b", text), f"name your design's parameter count ({count:,})"


### BEGIN HIDDEN TESTS
@pytest.mark.ex14_task2
def test_measure_returns_the_layout_for_a_short_run():
    config = design(BUDGET)
    data = measure({"mine": config}, seeds=(0, 1), steps=3)
    (d,) = data["designs"]
    assert d["parameters"] == minishare.count_parameters(config) and d["config"] == as_json(config)
    assert [run["seed"] for run in d["runs"]] == [0, 1]
    assert all(run["step"] == [1, 2, 3] and len(run["loss"]) == 3 for run in d["runs"])
### END HIDDEN TESTS
