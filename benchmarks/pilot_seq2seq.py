"""The pilot that chose Takase & Kiyono's task for the full run: train one encoder-decoder per
configuration on a toy task and print its held-out loss and exact match at two points of its
schedule, with the CPU seconds it took. Not a benchmark of speed: a calibration, run before the
settings are fixed (``minishare/experiments/settings.py`` quotes its numbers).

    python benchmarks/pilot_seq2seq.py                                   # the calibration of FULL
    python benchmarks/pilot_seq2seq.py --task reverse --options '{"max_length": 20, "n_symbols": 20}'
    python benchmarks/pilot_seq2seq.py --task addition --layers 3 --lrs 1e-3,3e-3 --steps 2000

Each configuration is (sharing, M, N): Vanilla is ("not-shared", n, n), a strategy of Takase &
Kiyono ("cycle", n, 2n) and so on. Runs go two at a time, one BLAS thread each. What the full run
needs of a task: Vanilla well above the task's no-model rules (``baselines``) and well below
exact match 1, so that methods can differ both ways.
"""
import argparse
import json
import os
import time
from multiprocessing import get_context


def train_one(job):
    """(job, [(step, held-out loss, exact match)], CPU seconds) of one configuration."""
    task_name, options, sharing, M, N, norm, lr, steps, seed, H = job
    from minishare import random as ms_random
    from minishare.data import seq2seq
    from minishare.run.build import build_model, make_config
    from minishare.tasks import Seq2SeqTask
    from minishare.train import TrainConfig, Trainer
    task = Seq2SeqTask(seq2seq.get_task(task_name, **options), batch_size=32, seed=seed)
    overrides = dict(hidden_size=H, num_attention_heads=4, intermediate_size=4 * H, num_hidden_layers=N,
                     norm_position=norm, sharing=sharing)
    if sharing not in ("not-shared", "universal"):
        overrides["num_unique_layers"] = M
    ms_random.manual_seed(seed)
    model = build_model("seq2seq", make_config("seq2seq", task.task.vocab_size, overrides=overrides))
    trainer = Trainer(model, task, TrainConfig(steps=steps, lr=lr, eval_every=steps // 2, progress=False))
    start = time.process_time()
    history = trainer.train()
    evals = [(row["step"], row["eval_loss"], row["eval_exact_match"]) for row in history if "eval_loss" in row]
    return job, evals, time.process_time() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default="addition")
    parser.add_argument("--options", default="{}", help="the task's knobs, as JSON")
    parser.add_argument("--layers", type=int, default=2, help="n: Vanilla M = N = n, the strategies M = n, N = 2n")
    parser.add_argument("--lrs", default="1e-3", help="comma-separated peak learning rates")
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--seeds", default="0")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--norm", default="post", choices=("post", "pre"))
    args = parser.parse_args()
    n, options = args.layers, json.loads(args.options)
    configs = [("not-shared", n, n), ("cycle", n, 2 * n)]
    jobs = [(args.task, options, sharing, M, N, args.norm, float(lr), args.steps, int(seed), args.hidden)
            for sharing, M, N in configs for lr in args.lrs.split(",") for seed in args.seeds.split(",")]
    os.environ.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    with get_context("spawn").Pool(2) as pool:
        for job, evals, cpu in pool.imap_unordered(train_one, jobs):
            _, _, sharing, M, N, norm, lr, steps, seed, H = job
            points = "; ".join(f"step {s}: loss {loss:.3f}, exact match {em:.3f}" for s, loss, em in evals)
            print(f"{sharing} M={M} N={N} {norm}-LN H={H} lr={lr:g} seed {seed}: {points} ({cpu:.0f} CPU-s)",
                  flush=True)


if __name__ == "__main__":
    main()
