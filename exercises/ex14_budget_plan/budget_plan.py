"""Exercise 14 (open): design a sharing plan for a parameter budget and defend it with a measured
curve (ALBERT Tables 3-4; Takase & Kiyono, Sec. 2 and Tables 1-2: equal parameters, more depth).

The task: the toy "reverse" sequence-to-sequence task (``minishare.tasks.Seq2SeqTask``), an
encoder-decoder ``TransformerConfig`` with at most ``BUDGET`` parameters counted by
``minishare.count_parameters`` (each shared tensor once). Choose the plan, measure it against at
least one alternative of the same budget over at least two seeds, write ``curve.json`` (and a
figure if you like), and argue for your choice in ``DEFENSE.md``.

    python budget_plan.py          # runs measure() on your designs and writes curve.json

``curve.json`` layout (the grader reads it):
    {"budget": BUDGET, "task": "reverse", "steps": S, "batch_size": B,
     "train": dataclasses.asdict(TrainConfig(...)),        # the settings every run trained with
     "designs": [{"name": str, "config": config.to_dict(), "parameters": int,
                  "runs": [{"seed": int, "step": [ints], "loss": [floats],
                            "eval_loss": float, "eval_token_accuracy": float}, ...]}, ...]}
The first design is your choice, ``design(BUDGET)``; the others are the alternatives you compare
it with, ``alternatives(BUDGET)``.

Each run follows one protocol, so that seed s means the same thing for every design (the same
initialization stream, the same batches in the same order, the same held-out examples) and the
runs of two designs pair up by seed:
    minishare.manual_seed(s)
    trainer = Trainer(EncoderDecoderModel(config), Seq2SeqTask("reverse", batch_size=B, seed=s), train)
    history = trainer.train()
The grader re-trains some of your runs this way, with the library, from the settings in
``curve.json``, and compares its losses with the ones you wrote.
"""
import json
import os

from minishare.models import TransformerConfig

BUDGET = 65_000
HERE = os.path.dirname(os.path.abspath(__file__))


def design(budget):
    """Task 1. Your plan: a ``TransformerConfig`` for the "reverse" task (vocab_size=13) with at
    most ``budget`` parameters and at least 90% of them used, in which some component shares
    (fewer distinct sets than layer positions)."""
    ### BEGIN SOLUTION task 1
    # Takase & Kiyono's recipe: the parameters of a 3-layer Vanilla model spent on 3 distinct
    # layers serving 6 positions, Cycle (rev), so the first and the last layer share.
    config = TransformerConfig(vocab_size=13, hidden_size=32, num_attention_heads=4, intermediate_size=64,
                               num_hidden_layers=6, sharing="cycle-rev", num_unique_layers=3)
    return config
    ### END SOLUTION


def alternatives(budget):
    """Task 2. {name: TransformerConfig} of the designs you compare yours with, each within the
    budget."""
    ### BEGIN SOLUTION task 2
    return {"vanilla N=3": TransformerConfig(vocab_size=13, hidden_size=32, num_attention_heads=4,
                                             intermediate_size=64, num_hidden_layers=3)}
    ### END SOLUTION


def measure(designs, seeds=(0, 1), steps=80, batch_size=16, lr=3e-3):
    """Task 2. Train every design of ``designs`` ({name: config}, yours first) once per seed on the
    reverse task, by the protocol of the module docstring, and return the curve.json dict (its
    layout is there too), the training settings included."""
    ### BEGIN SOLUTION task 2
    import dataclasses
    import minishare
    from minishare.models import EncoderDecoderModel
    from minishare.tasks import Seq2SeqTask
    from minishare.train import TrainConfig, Trainer
    settings = TrainConfig(steps=steps, lr=lr, warmup_steps=steps // 10, eval_every=steps, progress=False)
    result = {"budget": BUDGET, "task": "reverse", "steps": steps, "batch_size": batch_size,
              "train": dataclasses.asdict(settings), "designs": []}
    for name, config in designs.items():
        runs = []
        for seed in seeds:
            minishare.manual_seed(seed)            # the same seed, the same init stream and batches
            trainer = Trainer(EncoderDecoderModel(config), Seq2SeqTask("reverse", batch_size=batch_size, seed=seed),
                              settings)
            history = trainer.train()
            runs.append({"seed": seed, "step": [row["step"] for row in history],
                         "loss": [row["loss"] for row in history],
                         "eval_loss": history[-1]["eval_loss"],
                         "eval_token_accuracy": history[-1]["eval_token_accuracy"]})
        result["designs"].append({"name": name, "config": config.to_dict(),
                                  "parameters": minishare.count_parameters(config), "runs": runs})
    return result
    ### END SOLUTION


def plot(curve, path):
    """Mean training loss per design (moving average over 10 steps) with the seeds' min-max band."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for i, d in enumerate(curve["designs"]):
        losses = np.array([np.convolve(r["loss"], np.ones(10) / 10, mode="valid") for r in d["runs"]])
        steps = d["runs"][0]["step"][9:]
        ax.plot(steps, losses.mean(axis=0), color=f"C{i}", linestyle=("-", "--", ":")[i % 3],
                label=f"{d['name']} ({d['parameters']:,} parameters, {len(d['runs'])} seeds)")
        ax.fill_between(steps, losses.min(axis=0), losses.max(axis=0), color=f"C{i}", alpha=0.2)
    ax.set_xlabel("training step")
    ax.set_ylabel("training loss (nats), moving average of 10")
    ax.set_title(f"reverse task, budget {curve['budget']:,} parameters\n(line: mean over seeds; band: min-max)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    from minishare.files import atomic_write
    mine = design(BUDGET)
    curve = measure({f"mine: {mine.sharing} M={mine.num_unique_layers} N={mine.num_hidden_layers}": mine,
                     **alternatives(BUDGET)})
    with atomic_write(os.path.join(HERE, "curve.json")) as f:
        json.dump(curve, f, indent=1)
    plot(curve, os.path.join(HERE, "curve.png"))
