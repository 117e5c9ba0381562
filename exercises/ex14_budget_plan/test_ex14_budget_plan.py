"""Cases of the open exercise 14: the budget is met and used, the plan is valid and shares, the
curve file holds real measurements of the chosen design and of alternatives of the same budget
over the same seeds, and a defence is written. Whether the defence convinces is the teacher's call
(the rubric is in README.md).

The probes only read: ``design``, ``alternatives`` and ``measure`` of ``budget_plan`` (the
student's module), and the answer files beside it. What the student lays out as they choose (how
many designs, seeds and steps, the names) crosses as JSON text, since the grader holds a probe's
data to the reference's layout (the same keys and lengths). Every number the judges rely on is
computed here with the library, in a process of its own (``library``): parameter counts, plans,
and the re-training of runs the student reports (runs the grader draws), so a number written in
``curve.json`` counts only when the library reproduces it."""
import json
import math
import os
import re
import subprocess
import sys

import minishare
from minishare.grader.cases import case, decode, encode

BUDGET = 65_000                   # the exercise's budget (the module's own constant is not trusted)


# --------------------------------------------------------------------------- read by the probes
def answer_file(budget_plan, name):
    """The text of an answer file handed in beside the module, or None when there is none: the
    judges read curve.json with ``decode``."""
    path = os.path.join(os.path.dirname(os.path.abspath(budget_plan.__file__)), name)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return f.read()


# --------------------------------------------------------------------------- computed by the library
def library(function, *args):
    """``function(*args)`` (a function of this file) run in a fresh Python process on the NumPy
    backend with one thread, its result as JSON. A process of its own, because the library keeps
    global state (the seed, grad mode, shape-only building) that the grader's other work must not
    share, and because the grader's process may have chosen another backend."""
    lib = os.path.dirname(os.path.dirname(os.path.abspath(minishare.__file__)))
    env = {**os.environ, "MINISHARE_BACKEND": "numpy", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join([lib, os.environ.get("PYTHONPATH", "")])}
    code = ("import json, runpy, sys; f = runpy.run_path(sys.argv[1])[sys.argv[2]]; "
            "print(json.dumps(f(*json.loads(sys.stdin.read()))))")
    done = subprocess.run([sys.executable, "-c", code, os.path.abspath(__file__), function.__name__],
                          input=json.dumps(args), capture_output=True, text=True, env=env, timeout=120)
    if done.returncode != 0:
        raise AssertionError(f"the library could not run {function.__name__}: "
                             f"{done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def describe(configs):
    """[{"count", "shares"} or {"error"}] of config dicts: the parameters ``count_parameters``
    counts, and whether some component has fewer distinct sets than layer positions."""
    from minishare.models import TransformerConfig
    found = []
    for config in configs:
        try:
            c = TransformerConfig(**config)
            plan = c.plan()
            found.append({"count": minishare.count_parameters(c),
                          "shares": any(plan.n_sets(k) < plan.n_layers for k in ("attention", "ffn"))})
        except (TypeError, ValueError) as err:
            found.append({"error": f"{type(err).__name__}: {err}"})
    return found


def within_budget(name, described, low=0):
    assert "error" not in described, f"{name}: {described.get('error')}"
    assert low <= described["count"] <= BUDGET, f"{name}: {described['count']:,} parameters for a budget of {BUDGET:,}"


def config_key(config):
    return json.dumps(config, sort_keys=True)


# --------------------------------------------------------------------------- task 1
@case("ex14_task1")
def test_design_meets_and_uses_the_budget_and_shares(budget_plan):
    config = budget_plan.design(BUDGET)
    return {"type": type(config).__name__, "config": config.to_dict()}


@test_design_meets_and_uses_the_budget_and_shares.judge
def _(out, ref):
    assert out["type"] == "TransformerConfig", f"design returns a {out['type']}, not a TransformerConfig"
    assert out["config"].get("vocab_size") == 13, "the reverse task's vocabulary has 13 tokens"
    (mine,) = library(describe, [out["config"]])
    within_budget("your design", mine, low=0.9 * BUDGET)
    assert mine["shares"], "the plan shares nothing: every layer position has its own sets"


# --------------------------------------------------------------------------- task 2
def designs_of(budget_plan):
    """{"mine": config, "alternatives": {name: config}} as JSON text (how many, and their names, are
    the student's)."""
    others = budget_plan.alternatives(BUDGET)        # task 2's own function first
    return encode({"mine": budget_plan.design(BUDGET).to_dict(),
                   "alternatives": {name: config.to_dict() for name, config in others.items()}})


@case("ex14_task2")
def test_alternatives_are_within_the_budget_and_differ(budget_plan):
    return designs_of(budget_plan)


@test_alternatives_are_within_the_budget_and_differ.judge
def _(out, ref):
    out = decode(out)
    others = out["alternatives"]
    assert others, "compare with at least one alternative"
    for (name, config), described in zip(others.items(), library(describe, list(others.values()))):
        within_budget(name, described)
        assert config != out["mine"], f"{name} is your design itself"


@case("ex14_task2")
def test_curve_file_measures_the_design_and_its_alternatives(budget_plan):
    return {"designs": designs_of(budget_plan), "curve": answer_file(budget_plan, "curve.json")}


@test_curve_file_measures_the_design_and_its_alternatives.judge
def _(out, ref):
    data, out = decode(out["curve"]), decode(out["designs"])
    assert data is not None, "curve.json is missing: run `python budget_plan.py`"
    assert data.get("budget") == BUDGET and data.get("task") == "reverse", "curve.json: budget or task"
    assert isinstance(data.get("batch_size"), int) and isinstance(data.get("train"), dict), \
        "curve.json must record the settings of its runs: batch_size and train (TrainConfig's fields)"
    assert data["train"].get("steps") == data.get("steps"), "curve.json: steps and train['steps'] differ"
    designs = data["designs"]
    assert len(designs) >= 2 and designs[0]["config"] == out["mine"], "the first design must be design(BUDGET)"
    assert sorted(config_key(d["config"]) for d in designs[1:]) == \
        sorted(config_key(c) for c in out["alternatives"].values()), "the other designs must be alternatives(BUDGET)"
    assert len({config_key(d["config"]) for d in designs}) == len(designs), "a design is measured twice"
    seeds = [run["seed"] for run in designs[0]["runs"]]
    assert len(set(seeds)) >= 2, "measure at least two seeds"
    for d, described in zip(designs, library(describe, [d["config"] for d in designs])):
        within_budget(d["name"], described)
        assert d["parameters"] == described["count"], f"{d['name']}: {d['parameters']:,} parameters written, " \
                                                      f"count_parameters says {described['count']:,}"
        assert sorted(run["seed"] for run in d["runs"]) == sorted(seeds), \
            f"{d['name']}: measure every design over the same seeds, so that runs pair up by seed"
        for run in d["runs"]:
            assert run["step"] == list(range(1, data["steps"] + 1)) and len(run["loss"]) == data["steps"] >= 20, \
                f"{d['name']} seed {run['seed']}: one loss per step, at least 20 steps"
            assert all(math.isfinite(v) for v in run["loss"]) and math.isfinite(run["eval_loss"])
            assert sum(run["loss"][-10:]) < sum(run["loss"][:10]), f"{d['name']} seed {run['seed']} did not train"


# --------------------------------------------------------------------------- task 3
@case("ex14_task3")
def test_defense_is_written_and_cites_the_measured_design(budget_plan):
    text = answer_file(budget_plan, "DEFENSE.md")
    if text is None:                 # the task's answer is a file: not handed in, not started
        raise NotImplementedError("ex14 task 3: DEFENSE.md is not written yet")
    return {"text": text[:200_000], "config": budget_plan.design(BUDGET).to_dict()}


@test_defense_is_written_and_cites_the_measured_design.judge
def _(out, ref):
    (mine,) = library(describe, [out["config"]])
    assert "error" not in mine, mine.get("error")
    count = mine["count"]
    assert len(out["text"].split()) >= 150, "the defence needs at least 150 words"
    assert re.search(rf"\b{count:,}\b|\b{count}\b", out["text"]), f"name your design's parameter count ({count:,})"


### BEGIN HIDDEN TESTS
RETRAINED_STEPS = 40              # steps of a reported run the grader trains again
MAX_EXAMPLES_PER_STEP = 512       # batch_size × grad_accum_steps of a run the grader re-trains
RETRAIN_ATOL = 2e-3               # float32 runs on two machines agree to ~1e-6 over 40 steps


def retrain(config, seed, batch_size, train, until):
    """The first ``until`` steps of the run of ``config`` at ``seed``, trained by the exercise's
    protocol with the settings ``train`` (TrainConfig fields): its losses, and its held-out loss
    when ``until`` is the whole run."""
    from minishare.models import EncoderDecoderModel, TransformerConfig
    from minishare.tasks import Seq2SeqTask
    from minishare.train import TrainConfig, Trainer
    settings = TrainConfig(**{**train, "eval_every": train["steps"], "progress": False})
    minishare.manual_seed(seed)
    trainer = Trainer(EncoderDecoderModel(TransformerConfig(**config)),
                      Seq2SeqTask("reverse", batch_size=batch_size, seed=seed), settings)
    history = trainer.train(until=until)
    return {"loss": [row["loss"] for row in history], "eval_loss": history[-1].get("eval_loss")}


def assert_reproduced(name, seed, written, again):
    """The written losses agree with the library's, step by step; the message names the first
    step that does not."""
    assert len(written) >= len(again), f"{name}, seed {seed}: {len(written)} losses, {len(again)} steps trained"
    for step, (mine, library_loss) in enumerate(zip(written, again), start=1):
        assert abs(mine - library_loss) <= RETRAIN_ATOL, \
            f"{name}, seed {seed}: the loss written at step {step} is {mine:.6f}; the library, training " \
            f"this config by the exercise's protocol from the settings in the file, gets {library_loss:.6f}"


def reproduce_run(text, designs, draw):
    """Train again the first steps of one run of curve.json (``text``) and compare its losses: the
    run of ``draw`` (two numbers in [0, 1)) among the designs ``designs`` (a slice) and their seeds."""
    data = decode(text)
    assert data is not None, "curve.json is missing: run `python budget_plan.py`"
    candidates = data["designs"][designs]
    assert candidates, "curve.json measures no alternative"
    d = candidates[int(draw["design"] * len(candidates))]
    run = d["runs"][int(draw["run"] * len(d["runs"]))]
    train, batch_size = data["train"], data["batch_size"]
    per_step = batch_size * train.get("grad_accum_steps", 1)
    assert per_step <= MAX_EXAMPLES_PER_STEP, \
        f"{per_step} examples per step: the grader re-trains runs of at most {MAX_EXAMPLES_PER_STEP}"
    (described,) = library(describe, [d["config"]])
    within_budget(d["name"], described)
    until = min(RETRAINED_STEPS, len(run["loss"]))
    again = library(retrain, d["config"], run["seed"], batch_size, train, until)
    assert_reproduced(d["name"], run["seed"], run["loss"][:until], again["loss"])
    if until == train["steps"]:
        assert abs(run["eval_loss"] - again["eval_loss"]) <= RETRAIN_ATOL, \
            f"{d['name']}, seed {run['seed']}: eval_loss {run['eval_loss']:.6f} written, {again['eval_loss']:.6f} measured"


def drawn_run(rng):
    """Which run the grader trains again, drawn per submission: a written curve must hold at every run."""
    return {"design": float(rng.random()), "run": float(rng.random())}


@case("ex14_task2")
def test_a_run_of_your_design_reproduces(budget_plan):
    """A run of your design, at a seed the grader draws."""
    return answer_file(budget_plan, "curve.json")


@test_a_run_of_your_design_reproduces.given
def _(rng):
    return drawn_run(rng)


@test_a_run_of_your_design_reproduces.judge
def _(out, ref, given):
    reproduce_run(out, slice(0, 1), given)


@case("ex14_task2")
def test_a_run_of_an_alternative_reproduces(budget_plan):
    """A run of an alternative and a seed, both drawn by the grader."""
    return answer_file(budget_plan, "curve.json")


@test_a_run_of_an_alternative_reproduces.given
def _(rng):
    return drawn_run(rng)


@test_a_run_of_an_alternative_reproduces.judge
def _(out, ref, given):
    reproduce_run(out, slice(1, None), given)


@case("ex14_task2", timeout=30)
def test_measure_follows_the_protocol_on_a_short_run(budget_plan, given):
    config = budget_plan.design(BUDGET)
    return {"config": config.to_dict(),
            "data": encode(budget_plan.measure({"mine": config}, seeds=tuple(given["seeds"]), steps=3))}


@test_measure_follows_the_protocol_on_a_short_run.given
def _(rng):
    return {"seeds": rng.choice(1000, size=2, replace=False).tolist()}    # not only the 0 and 1 of curve.json


@test_measure_follows_the_protocol_on_a_short_run.judge
def _(out, ref, given):
    data = decode(out["data"])
    assert isinstance(data.get("train"), dict) and data.get("batch_size"), \
        "measure must record its settings: batch_size and train (TrainConfig's fields)"
    assert data["steps"] == data["train"]["steps"] == 3, "measure(..., steps=3) must train 3 steps"
    (d,) = data["designs"]
    (described,) = library(describe, [out["config"]])
    assert d["config"] == out["config"] and d["parameters"] == described.get("count"), \
        "the design's config and its parameter count (count_parameters)"
    assert [run["seed"] for run in d["runs"]] == given["seeds"], "one run per seed, in the order given"
    for run in d["runs"]:
        assert run["step"] == [1, 2, 3] and len(run["loss"]) == 3, f"seed {run['seed']}: steps {run['step']}"
        again = library(retrain, out["config"], run["seed"], data["batch_size"], data["train"], 3)
        assert_reproduced("measure's run", run["seed"], run["loss"], again["loss"])
        assert abs(run["eval_loss"] - again["eval_loss"]) <= RETRAIN_ATOL, \
            f"seed {run['seed']}: eval_loss {run['eval_loss']:.6f}, the library's {again['eval_loss']:.6f}"
### END HIDDEN TESTS
