"""Host synchronizations per training step of a tiny ALBERT, counted by the strict backend.

Each sync (``float``, ``.item()``, a copy to the host, boolean-mask indexing ...) makes the host
wait for the GPU's queue to drain; the goal is one per step. Run on a CPU:

    python benchmarks/host_syncs.py
"""
import minishare
from minishare import backend, data
from minishare.models import AlbertConfig, AlbertForPreTraining
from minishare.tasks import PretrainingTask
from minishare.train import TrainConfig, Trainer


def tiny_albert_task():
    documents = data.grammar_corpus(48, seed=3)
    tokenizer = data.Tokenizer.train([s for d in documents for s in d], vocab_size=80)
    train_docs, eval_docs = data.split_documents(documents, eval_fraction=0.25, seed=0)
    return PretrainingTask(train_docs, eval_docs, tokenizer, "sop", batch_size=8, max_seq_length=32,
                           seed=2, n_eval_batches=1)


def syncs_per_step(task, sharing, optimizer, steps=3):
    """Host syncs of each of ``steps`` training steps (no evaluation), under the strict backend."""
    backend.use("strict")
    minishare.manual_seed(0)
    model = AlbertForPreTraining(AlbertConfig(
        vocab_size=task.tokenizer.vocab_size, embedding_size=16, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=64, max_position_embeddings=32, sharing=sharing))
    trainer = Trainer(model, task, TrainConfig(steps=steps + 1, warmup_steps=1, optimizer=optimizer,
                                               eval_every=steps + 1, progress=False))
    counts = []
    for step in range(1, steps + 1):
        before = backend.host_syncs()
        trainer.train(until=step)
        counts.append(backend.host_syncs() - before)
    return counts


if __name__ == "__main__":
    task = tiny_albert_task()
    for sharing in ("all-shared", "not-shared"):
        for optimizer in ("adamw", "lamb"):
            print(f"{sharing:10s} {optimizer:5s} host syncs per step: {syncs_per_step(task, sharing, optimizer)}")
