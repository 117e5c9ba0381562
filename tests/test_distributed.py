"""Data-parallel training (minishare.distributed): the weighting of each rank's share against the
whole batch's gradient in one process, the one flat buffer, and `mpiexec -n 2` training against
one process (skipped where mpi4py or mpiexec are missing)."""
import csv
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from minishare import backend, distributed
from minishare.run.build import make_task
from minishare.models import AlbertConfig, AlbertForPreTraining
from minishare.tensor import Tensor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
try:
    import mpi4py  # noqa: F401
    HAVE_MPI = shutil.which("mpiexec") is not None
except ImportError:
    HAVE_MPI = False
needs_mpi = pytest.mark.skipif(not HAVE_MPI, reason="needs mpi4py and mpiexec (pip install mpi4py mpich)")


@pytest.fixture(scope="module")
def task(text_corpus):
    return make_task("pretrain", seed=0, batch_size=4, seq_len=32, corpus=str(text_corpus), vocab_size=80)[0]


def tiny_albert(vocab_size, sharing="not-shared"):
    config = AlbertConfig.from_preset("albert-tiny", vocab_size=vocab_size, hidden_size=16, embedding_size=8,
                                      num_attention_heads=2, intermediate_size=32, num_hidden_layers=2,
                                      sharing=sharing)
    return AlbertForPreTraining(config).double()


def gradients(model):
    return {name: backend.to_numpy(p.grad).copy() for name, p in model.named_parameters() if p.grad is not None}


def test_shares_follow_array_split():
    for B, K in [(8, 2), (7, 2), (7, 3), (3, 3), (10, 4)]:
        expected = [len(part) for part in np.array_split(np.arange(B), K)]
        got = [stop - start for start, stop in (distributed.shard_rows(B, K, r) for r in range(K))]
        assert got == expected
        assert distributed.shard_rows(B, K, 0)[0] == 0 and distributed.shard_rows(B, K, K - 1)[1] == B


def test_two_shards_with_different_masked_counts_give_the_whole_batch_gradient(task):
    batch = {k: v.copy() for k, v in task.batch(0).items()}          # 4 rows: rank 0 rows 0-1, rank 1 rows 2-3
    ids = batch["input_ids"]
    batch["labels"][:] = -100
    batch["labels"][0, 1] = ids[0, 1]                                 # rank 0: 1 masked token
    for t in (1, 2, 3, 4, 5):                                         # rank 1: 5 masked tokens
        batch["labels"][2 + t % 2, t] = ids[2 + t % 2, t]
    # counted by hand: 6 masked tokens, 4 sequences; rank 0 holds 1 and 2 of them, rank 1 5 and 2
    assert task.loss_counts(batch) == {"mlm_loss": 6, "sop_loss": 4}
    assert task.loss_counts(distributed.shard(batch, 2, 1)) == {"mlm_loss": 5, "sop_loss": 2}

    model = tiny_albert(task.tokenizer.vocab_size)
    label = task.train.label_name
    model(input_ids=ids, attention_mask=batch["attention_mask"], token_type_ids=batch["token_type_ids"],
          labels=batch["labels"], sentence_order_label=batch[label]).loss.backward()
    whole = gradients(model)                                          # the global batch, one forward

    summed, averaged = {}, {}
    for rank in (0, 1):
        model.zero_grad()
        sum(distributed.scaled_terms(task, model, batch, 2, rank).values()).backward()
        for name, g in gradients(model).items():
            summed[name] = summed.get(name, 0) + g
        model.zero_grad()
        task.loss(model, distributed.shard(batch, 2, rank))[0].backward()   # the rank's own mean
        for name, g in gradients(model).items():
            averaged[name] = averaged.get(name, 0) + g / 2
    assert summed.keys() == whole.keys()
    for name in whole:
        np.testing.assert_allclose(summed[name], whole[name], rtol=1e-10, atol=1e-13, err_msg=name)
    # the plain average of the ranks' means is not the whole batch's gradient: the test can fail
    assert not all(np.allclose(averaged[name], whole[name], rtol=1e-3, atol=1e-8) for name in whole)


@pytest.mark.parametrize("name", ["copy", "lm"])
def test_the_other_tasks_split_into_the_whole_batch_gradient(name, text_corpus):
    """Seq2seq: a mean over the target tokens that are not padding (the shards hold different
    numbers); LM: over every window's T - 1 targets. Three ranks, 7 rows: 3 + 2 + 2."""
    from minishare.run.build import build_model, make_config
    task, V = make_task(name, seed=0, batch_size=7, seq_len=16, corpus=str(text_corpus), vocab_size=80)
    model = build_model(name, make_config(name, V, overrides=dict(hidden_size=16, num_attention_heads=2,
                                                                 intermediate_size=32, num_hidden_layers=2),
                                          seq_len=16)).double()
    batch = task.batch(0)
    if name == "copy":
        counts = [task.loss_counts(distributed.shard(batch, 3, r))["loss"] for r in range(3)]
        assert len(set(c / len(distributed.shard(batch, 3, r)["src"]) for r, c in enumerate(counts))) > 1
    task.loss(model, batch)[0].backward()
    whole = gradients(model)
    summed = {}
    for rank in range(3):
        model.zero_grad()
        sum(distributed.scaled_terms(task, model, batch, 3, rank).values()).backward()
        for key, g in gradients(model).items():
            summed[key] = summed.get(key, 0) + g
    for key in whole:
        np.testing.assert_allclose(summed[key], whole[key], rtol=1e-10, atol=1e-13, err_msg=key)


def test_the_buffer_holds_each_distinct_parameter_once():
    sizes = {}
    for sharing in ("not-shared", "all-shared"):
        model = tiny_albert(50, sharing=sharing)
        params = list(model.parameters())
        for p in params[:-1]:
            p.grad = backend.xp.ones(p.shape)
        params[-1].grad = None                                        # a parameter without a gradient
        buffer, distinct = distributed.flatten_gradients(params + params, [Tensor(np.array(2.5))])
        assert len(distinct) == len(params)
        sizes[sharing] = buffer.size - len(distinct) - 1              # the gradients alone
        values = distributed.unflatten_gradients(backend.to_numpy(buffer) * 2, distinct)   # as if 2 ranks summed
        assert values == [5.0]
        assert params[-1].grad is None and np.all(backend.to_numpy(params[0].grad) == 2)
    # N = 2 positions: all-shared sends one layer less; by hand, H = 16, FFN I = 32: attention
    # 4 (H^2 + H), two LayerNorms 2 (2H), FFN HI + I + IH + H
    H, I = 16, 32
    assert sizes["not-shared"] - sizes["all-shared"] == 4 * (H * H + H) + 4 * H + 2 * H * I + I + H


def test_a_missing_mpi4py_is_one_line_saying_what_to_install(monkeypatch, capsys, tmp_path):
    from minishare import cli
    monkeypatch.setitem(sys.modules, "mpi4py", None)                  # import mpi4py now fails
    status = cli.main(["train", "--task", "copy", "--steps", "1", "--out", str(tmp_path / "run"),
                       "--no-progress", "--data-parallel"])
    err = capsys.readouterr().err.strip()
    assert status == 2 and "\n" not in err and "pip install mpi4py mpich" in err


def test_started_by_mpiexec_without_data_parallel_is_refused(monkeypatch, capsys, tmp_path):
    from minishare import cli
    monkeypatch.setenv("PMI_SIZE", "2")
    status = cli.main(["train", "--task", "copy", "--steps", "1", "--out", str(tmp_path / "run"), "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert status == 2 and "--data-parallel" in err and not (tmp_path / "run").exists()


# --- mpiexec -n 2 against one process -----------------------------------------------------------------
def train(out, corpus, steps, batch_size, ranks=None, extra=()):
    argv = [sys.executable, "-m", "minishare", "train", "--corpus", str(corpus), "--vocab-size", "80",
            "--seq-len", "32", "--batch-size", str(batch_size), "-H", "32", "-N", "2", "--steps", str(steps),
            "--eval-every", "2", "--out", str(out), "--no-progress", *extra]
    if ranks:
        argv = ["mpiexec", "-n", str(ranks), *argv, "--data-parallel"]
    env = {**os.environ, "PYTHONPATH": ROOT, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def weights(out):
    from minishare import checkpoint
    return {name: backend.to_numpy(p.data) for name, p in checkpoint.load(str(out / "checkpoint.npz")).named_parameters()}


def history(out):
    with open(out / "history.csv", newline="") as f:
        return list(csv.DictReader(f))


@needs_mpi
def test_two_ranks_reach_the_one_process_weights_with_an_uneven_split_and_a_resume(tmp_path, text_corpus):
    """Batch 7 on 2 ranks (4 + 3 rows), 2 steps, then resumed to 4 by both ranks; the same in one
    process. The weights agree to float32 rounding: the ranks' partial sums of a gradient add in
    another order than one process's sum, a few units in the last place of float32 (2^-23 of the
    value), which a few AdamW steps of lr 1e-3 carry into the weights at about that size. 1e-6
    absolute on weights of size at most about 1 is a few such units and far below one step
    (lr = 1e-3)."""
    one, two = tmp_path / "one", tmp_path / "two"
    for steps in (2, 4):
        resume = ("--resume",) if steps == 4 else ()
        train(one, text_corpus, steps, 7, extra=resume)
        done = train(two, text_corpus, steps, 7, ranks=2, extra=resume)
        assert done.stdout.count("written to") == 1                  # rank 0 alone prints
    a, b = weights(one), weights(two)
    assert a.keys() == b.keys()
    worst = max(float(np.abs(a[k] - b[k]).max()) for k in a)
    assert worst < 1e-6, worst
    moved = max(float(np.abs(a[k] - weights_at_start(tmp_path, text_corpus)[k]).max()) for k in a)
    assert moved > 100 * worst                                        # the runs did train
    h1, h2 = history(one), history(two)
    assert [r["step"] for r in h2] == ["1", "2", "3", "4"]
    for r1, r2 in zip(h1, h2):
        for key in ("loss", "mlm_loss", "sop_loss", "grad_norm", "eval_mlm_loss"):
            if r1[key]:
                assert float(r2[key]) == pytest.approx(float(r1[key]), rel=1e-5), key
    with open(two / "config.json") as f:
        assert json.load(f)["ranks"] == 2


def weights_at_start(tmp_path, corpus):
    start = tmp_path / "start"
    if not start.exists():
        train(start, corpus, 1, 7, extra=("--lr", "1e-12"))
    return weights(start)


RANKS_SCRIPT = """
import json, sys, numpy
from minishare import backend, distributed
from minishare.experiments import run_training
result = run_training(corpus=sys.argv[1], vocab_size=80, seq_len=32, batch_size=8, overrides={"hidden_size": 32,
                      "num_hidden_layers": 2, "sharing": "all-shared"}, steps=3, eval_every=3, out=sys.argv[2],
                      progress=False, data_parallel=True)
dp = result["trainer"].data_parallel
sums = [float(backend.to_numpy(p.data).astype(numpy.float64).sum()) for p in result["model"].parameters()]
gathered = dp.comm.gather(sums, root=0)
if dp.rank == 0:
    json.dump(gathered, open(sys.argv[3], "w"))
"""


@needs_mpi
def test_every_rank_holds_the_same_weights(tmp_path, text_corpus):
    script, out = tmp_path / "ranks.py", tmp_path / "sums.json"
    script.write_text(RANKS_SCRIPT)
    env = {**os.environ, "PYTHONPATH": ROOT, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(["mpiexec", "-n", "2", sys.executable, str(script), str(text_corpus),
                           str(tmp_path / "run"), str(out)], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    rank0, rank1 = json.loads(out.read_text())
    assert rank0 == rank1                                             # bit for bit
    assert sorted(os.listdir(tmp_path / "run")) == ["checkpoint.npz", "config.json", "history.csv",
                                                    "tokenizer.json"]
