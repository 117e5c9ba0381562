"""The reproduce pipeline: report, figures and the cache (only the experiments that train nothing,
so this stays fast; CI runs the whole --quick job)."""
import os

import pytest

pytest.importorskip("matplotlib")

from minishare.experiments import exp_params, registry, reproduce  # noqa: E402
from minishare.experiments.settings import FULL, QUICK  # noqa: E402

CHEAP = ["params", "plans"]


def test_report_embeds_the_figures_and_tables(tmp_path):
    path = reproduce.run(str(tmp_path), quick=True, only=CHEAP, progress=False)
    text = open(path).read()
    assert "## Parameter counts" in text and "## The sharing plans" in text
    assert "11,683,584" in text and "| 12M" in text          # ALBERT-base, ours beside the paper's
    n = QUICK.seq2seq["num_hidden_layers"]                   # cycle-rev with M = n, N = 2n
    letters = [chr(ord("A") + i) for i in range(n)]
    assert " ".join(letters + letters[::-1]) in text
    for line in text.splitlines():
        if line.startswith("!["):
            png = line[line.index("](") + 2:-1]
            assert os.path.exists(tmp_path / png), png
            assert os.path.exists(tmp_path / png.replace(".png", ".svg"))
    assert "## Convergence" not in text                      # not run, not cached: not reported


def test_a_second_run_redraws_from_the_cache(tmp_path, monkeypatch):
    reproduce.run(str(tmp_path), quick=True, only=CHEAP, progress=False)

    def must_not_run(*args, **kwargs):
        raise AssertionError("a cached experiment ran again")
    monkeypatch.setattr(exp_params, "run", must_not_run)
    text = open(reproduce.run(str(tmp_path), quick=True, only=CHEAP, progress=False)).read()
    assert "11,683,584" in text


def test_other_settings_do_not_reuse_the_cache(tmp_path):
    reproduce.run(str(tmp_path), quick=True, only=["plans"], progress=False)
    folder = str(tmp_path / "plans")
    plans = registry.get("plans")
    assert reproduce._cached(folder, plans.settings(QUICK)) is not None
    assert reproduce._cached(folder, plans.settings(FULL)) is None


def test_only_keeps_what_the_report_and_the_ledger_said_of_the_others(tmp_path):
    """--only NAME changes NAME's part of the book alone: another experiment's section of the
    report and its records in the ledger stay as they were, even when its result was made under
    settings that have changed since (so it is no longer a cache hit)."""
    import json
    reproduce.run(str(tmp_path), quick=True, only=CHEAP, progress=False)
    before = open(tmp_path / "report.md").read()
    plans_section = before[before.index("## The sharing plans"):]
    saved = json.loads((tmp_path / "plans" / "result.json").read_text())
    saved["settings"]["tier"] = "an older one"              # no longer matches: not a cache hit
    (tmp_path / "plans" / "result.json").write_text(json.dumps(saved))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "book", "figures", "claims.json")) as f:
        committed = json.load(f)
    theirs = {key: [x for x in committed[key] if x["experiment"] == "albert_sharing"] for key in ("claims", "baselines")}
    assert theirs["claims"] and theirs["baselines"]
    (tmp_path / "claims.json").write_text(json.dumps(theirs))          # a ledger that says something of another
    text = open(reproduce.run(str(tmp_path), quick=True, only=["params"], progress=False)).read()
    assert "## Parameter counts" in text and plans_section.strip() in text
    ledger = json.loads((tmp_path / "claims.json").read_text())
    assert [x for x in ledger["claims"] if x["experiment"] == "albert_sharing"] == theirs["claims"]
    assert [x for x in ledger["baselines"] if x["experiment"] == "albert_sharing"] == theirs["baselines"]


def test_unknown_experiment_is_named(tmp_path):
    with pytest.raises(ValueError, match="unknown experiment.*bogus"):
        reproduce.run(str(tmp_path), quick=True, only=["bogus"], progress=False)


# --- statistics over seeds ----------------------------------------------------------------------
from minishare.experiments import runs, stats  # noqa: E402


def test_spread_hand_worked():
    s = stats.spread([1, 2, 3, 4])
    # mean 10/4; squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5, over n - 1 = 3
    assert s["mean"] == 2.5 and s["std"] == pytest.approx((5 / 3) ** 0.5)
    assert (s["min"], s["max"], s["n"], s["values"]) == (1.0, 4.0, 4, [1.0, 2.0, 3.0, 4.0])
    assert stats.spread([7])["std"] == 0.0
    with pytest.raises(ValueError, match="at least one"):
        stats.spread([])
    with pytest.raises(ValueError, match="finite"):
        stats.spread([1.0, float("nan")])


def test_fmt_hand_worked():
    # deviations -0.014, 0, +0.014: std = sqrt(2 * 0.014^2 / 2) = 0.014
    assert stats.fmt(stats.spread([5.841, 5.855, 5.869])) == "5.855 ± 0.014 (5.841–5.869)"
    assert stats.fmt(stats.spread([0.5]), digits=2) == "0.50 (1 seed)"


# --- parallel training and the run cache --------------------------------------------------------
def tiny_request(seed, sharing="all-shared"):
    return dict(task="pretrain", overrides=dict(hidden_size=16, embedding_size=8, num_attention_heads=2,
                                                intermediate_size=32, num_hidden_layers=2, sharing=sharing),
                vocab_size=300, seq_len=16, steps=3, batch_size=4, lr=1e-3, eval_every=3, seed=seed)


TINY = {"a-s0": tiny_request(0), "a-s1": tiny_request(1), "n-s0": tiny_request(0, "not-shared")}


def test_train_all_in_two_processes_equals_one_process(tmp_path):
    serial = runs.train_all(str(tmp_path / "serial"), TINY, jobs=1, progress=False)
    parallel = runs.train_all(str(tmp_path / "parallel"), TINY, jobs=2, progress=False)
    assert set(serial) == set(parallel) == set(TINY)
    timings = ("step_time", "wall_clock")
    for name in TINY:
        measured = {k: v for k, v in serial[name].items() if k not in timings}
        assert {k: v for k, v in parallel[name].items() if k not in timings} == pytest.approx(measured, rel=1e-6), name
    assert serial["a-s0"] != serial["a-s1"]                   # the seed matters: not one run copied
    with pytest.raises(ValueError, match="jobs"):
        runs.train_all(str(tmp_path / "serial"), TINY, jobs=0)


def test_train_all_reuses_finished_runs_and_retrains_changed_ones(tmp_path, monkeypatch):
    out = str(tmp_path)
    first = runs.train_all(out, TINY, jobs=1, progress=False)
    trained = []
    real = runs.run_training

    def counting(**kwargs):
        trained.append(kwargs["out"])
        return real(**kwargs)
    monkeypatch.setattr(runs, "run_training", counting)
    assert runs.train_all(out, TINY, jobs=1, progress=False) == first and trained == []
    assert runs.cached_run(out, "a-s0", progress=False, **TINY["a-s0"])["final"] == first["a-s0"]
    assert trained == []
    changed = {**TINY, "a-s0": {**TINY["a-s0"], "steps": 4}}
    runs.train_all(out, changed, jobs=1, progress=False)
    assert trained == [os.path.join(out, "runs", "a-s0")]


def _openblas_threads(_):
    """The thread count of the OpenBLAS this process loaded (NumPy's wheels bundle one), or None."""
    import ctypes
    import numpy  # noqa: F401  (loads the library)
    paths = {line.split()[-1] for line in open("/proc/self/maps") if "openblas" in line.lower()}
    for path in paths:
        lib = ctypes.CDLL(path)
        for symbol in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_", "openblas_get_num_threads"):
            if hasattr(lib, symbol):
                return getattr(lib, symbol)()
    return None


def test_workers_run_with_one_blas_thread(monkeypatch):
    if not os.path.exists("/proc/self/maps") or _openblas_threads(0) is None:
        pytest.skip("needs Linux and NumPy with OpenBLAS to ask the library for its threads")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")           # what a user may have set
    with runs.worker_pool(2) as pool:
        assert pool.map(_openblas_threads, [0, 1]) == [1, 1]
    assert os.environ["OPENBLAS_NUM_THREADS"] == "4"          # restored for this process


def _toy(name, steps):
    """An experiment module that asks for one run, "shared", of ``steps`` steps."""
    import types
    module = types.ModuleType(f"toy_{name}")
    module.NAME, module.TITLE, module.ORDER, module.READS = name, name, 0, ()
    module.run = module.figures = module.report = lambda *args, **kwargs: None
    module.requests = lambda settings, out: {"shared": {"steps": steps}}
    return module


def test_two_experiments_may_share_a_run_but_not_change_it():
    toys = [registry.register(_toy(name, steps)) for name, steps in (("one", 1), ("same", 1), ("other", 2))]
    try:
        assert reproduce.requests(["one", "same"], QUICK) == {"shared": {"steps": 1}}
        with pytest.raises(ValueError, match="shared"):
            reproduce.requests(["one", "other"], QUICK)
    finally:
        for toy in toys:
            registry.unregister(toy.name)


def test_every_experiment_names_its_runs_once_per_seed():
    """A run's seed is one of its experiment's seeds (``few_seeds`` where it declares them), or the
    learning-rate search's own seed, which no comparison uses."""
    from minishare.experiments import exp_takase
    for settings in (QUICK, FULL):
        for experiment, found in registry.experiments().items():
            seeds = found.settings(settings).seeds
            for name, request in reproduce.requests([experiment], settings).items():
                assert name.endswith(f"-s{request['seed']}"), name
                tuning = experiment == "takase" and name.startswith("takase-tune-")
                assert request["seed"] == exp_takase.TUNING_SEED if tuning else request["seed"] in seeds, name
    assert FULL.few_seeds == FULL.seeds[:len(FULL.few_seeds)]      # secondary runs reuse primary ones


def test_an_experiment_is_keyed_by_the_settings_it_declares(tmp_path):
    """Changing a field that one experiment declares retrains that one alone; raising the data
    pipeline's version retrains everything; reading a field it does not declare is an error."""
    import dataclasses
    import json as _json

    from minishare import data
    from minishare.experiments.experiment import key_matches
    reproduce.run(str(tmp_path), quick=True, only=CHEAP, progress=False)
    key = _json.loads((tmp_path / "plans" / "result.json").read_text())["settings"]
    assert key == {"data_pipeline": data.PIPELINE_VERSION, "quick": True, "seeds": list(QUICK.seeds),
                   "albert": QUICK.albert, "seq2seq": QUICK.seq2seq}    # the plans drawn are of these two models
    plans = registry.get("plans")
    assert key_matches(key, plans.settings(dataclasses.replace(QUICK, lm_steps=QUICK.lm_steps + 1)))
    assert not key_matches(key, plans.settings(dataclasses.replace(QUICK, albert={})))
    assert not key_matches({**key, "data_pipeline": data.PIPELINE_VERSION + 1}, plans.settings(QUICK))
    with pytest.raises(ValueError, match="'plans' reads settings.lm_steps, which its READS does not declare"):
        plans.settings(QUICK).lm_steps


def test_a_worker_stops_when_its_parent_is_gone(tmp_path):
    """A training worker whose parent died (SIGKILL: no chance to stop its pool) gets SIGTERM, the
    signal a run answers by saving and stopping, within about a second."""
    import subprocess
    import sys
    import textwrap
    script = textwrap.dedent(f"""
        import os, signal, sys, time
        sys.path.insert(0, {os.path.dirname(os.path.dirname(os.path.abspath(__file__)))!r})
        from minishare.experiments.runs import stop_with_parent
        if os.fork() == 0:                      # the "parent" that will die
            if os.fork() == 0:                  # the worker
                signal.signal(signal.SIGTERM, lambda *a: (open({str(tmp_path / 'stopped')!r}, 'w').close(), os._exit(0)))
                stop_with_parent(os.getppid(), every=0.05)
                time.sleep(30)
                os._exit(1)
            time.sleep(0.3)
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(3)
    """)
    subprocess.run([sys.executable, "-c", script], timeout=60, check=True)
    assert (tmp_path / "stopped").exists()


def test_estimate_here_charges_each_kind_its_median_step_after_the_first():
    """The training an experiment does in its own process: each kind's probe, its first step
    (warming up) left out, the median of the rest times the kind's updates."""
    asked = []

    class Probe:
        def __init__(self, times):
            self.times, self.history = times, []

        def train(self):
            self.history = [{"step_time": t} for t in self.times]

    def kind(times):
        def make(steps):
            asked.append(steps)
            return Probe(times)
        return make
    seconds = runs.estimate_here({"a": (10, kind([9.0, 1.0, 3.0, 2.0])), "b": (100, kind([5.0, 0.5, 0.5, 0.25]))})
    assert asked == [4, 4] and seconds == pytest.approx(10 * 2.0 + 100 * 0.5)


def test_estimate_charges_each_request_its_models_step_time(monkeypatch):
    """One probe per distinct model (seeds and step counts do not make a new model); the total is
    each request's steps times its model's probed step time, shared among the jobs."""
    probed = []

    class Pool:
        def map(self, fn, probes):
            probed.extend(probes)
            return [0.5 if p["overrides"]["sharing"] == "all-shared" else 2.0 for p in probes]

    import contextlib
    monkeypatch.setattr(runs, "worker_pool", lambda n: contextlib.nullcontext(Pool()))
    requests = {"a-s0": tiny_request(0), "a-s1": tiny_request(1), "n-s0": {**tiny_request(0, "not-shared"), "steps": 10}}
    seconds, shapes = runs.estimate(requests, jobs=2)
    assert shapes == 2 and len(probed) == 2 and all(p["steps"] == 4 for p in probed)
    assert seconds == pytest.approx((3 * 0.5 + 3 * 0.5 + 10 * 2.0) / 2)


def test_experiments_that_train_in_their_own_process_run_side_by_side(tmp_path, capsys):
    """With two jobs, looped depth and the relaxed conversion (both train in their own process)
    run at once, each in a single-threaded worker; each result is the one its run gives in this
    process on one thread."""
    import json
    import minishare
    reproduce.run(str(tmp_path), quick=True, only=["looped", "relaxed"], jobs=2)
    assert "looped, relaxed: running side by side, 2 at a time" in capsys.readouterr().out
    before = minishare.get_num_threads()
    minishare.set_num_threads(1)
    try:
        for name in ("looped", "relaxed"):
            with open(tmp_path / name / "result.json") as f:
                saved = json.load(f)["result"]
            experiment = registry.get(name)
            here = experiment.run(str(tmp_path), experiment.settings(QUICK), progress=False)
            assert saved == json.loads(json.dumps(here)), name
    finally:
        minishare.set_num_threads(before)
