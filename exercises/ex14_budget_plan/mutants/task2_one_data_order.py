"""measure that varies only the initialization with the seed and trains every run on the batches
of Seq2SeqTask(seed=0): the seeds then do not sample the data order and held-out set, and seed 1
is not the run the protocol (and the grader) calls seed 1."""
import dataclasses as _dataclasses


def measure(designs, seeds=(0, 1), steps=80, batch_size=16, lr=3e-3):
    import minishare
    from minishare.models import EncoderDecoderModel
    from minishare.tasks import Seq2SeqTask
    from minishare.train import TrainConfig, Trainer
    settings = TrainConfig(steps=steps, lr=lr, warmup_steps=steps // 10, eval_every=steps, progress=False)
    result = {"budget": BUDGET, "task": "reverse", "steps": steps, "batch_size": batch_size,
              "train": _dataclasses.asdict(settings), "designs": []}
    for name, config in designs.items():
        runs = []
        for seed in seeds:
            minishare.manual_seed(seed)
            history = Trainer(EncoderDecoderModel(config), Seq2SeqTask("reverse", batch_size=batch_size, seed=0),
                              settings).train()
            runs.append({"seed": seed, "step": [row["step"] for row in history],
                         "loss": [row["loss"] for row in history], "eval_loss": history[-1]["eval_loss"],
                         "eval_token_accuracy": history[-1]["eval_token_accuracy"]})
        result["designs"].append({"name": name, "config": config.to_dict(),
                                  "parameters": minishare.count_parameters(config), "runs": runs})
    return result
