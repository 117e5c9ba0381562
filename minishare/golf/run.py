"""The grader: one entry, from its declaration to its leaderboard row, in this process.

    row = grade(load_entry("entry.json"), split="test")

1. Data: the competition's splits (``splits.golf_splits``) and a BPE tokenizer trained on the
   training split alone, with the V the entry declares.
2. Bytes: the model is built shape-only and counted (``budget``); over the budget, the entry is
   refused with its count, before any training.
3. Compute: the model is built (seeded by the recipe) and trained on the training split by the
   course's ``Trainer``, one step at a time, while the CPU time of this process since training
   began (``time.process_time``: every thread's, so BLAS threads buy nothing) is under the limit.
   The limit is checked between steps: the step that crosses it finishes, and the entry is scored
   on what it had. The data preparation before training is the grader's and is not counted.
4. Storage: the trained weights are replaced by their stored form at the declared precision
   (``quantize``).
5. Score: bits per byte of that model on the chosen held-out split (``score``); the hidden test
   split is read here, by the grader, and nowhere else.

A run is deterministic for a seed: the same entry gives the same bits per byte, as long as it is
not stopped by its CPU limit (where it stops depends on the machine's speed; a leaderboard runs every
entry on one machine).
"""
import time

from minishare import random as ms_random, safeio
from minishare.data import Tokenizer
from minishare.errors import InvalidValue
from minishare.golf import budget, designs, quantize, score, splits
from minishare.golf.splits import document_text
from minishare.progress import bar as progress_bar
from minishare.tasks import LanguageModelingTask
from minishare.train import Trainer

# 64 KiB, set by the reference entries (experiments.exp_golf, V = 256): at int8 the not-shared
# baseline of two layers of H = 48 stores 54,104 bytes (11,432 to spare), the ALBERT-style model
# 49,204, the looped one 52,848 and the relaxed one 61,992, so each design fits and each trades
# depth, width and corrections inside one budget; their float32 copies (184 to 211 KB) do not fit:
# storing at low precision is part of the game.
BUDGET_BYTES = 64 << 10
CPU_SECONDS = 300.0         # five minutes of one core


def prepare(entry, corpus="grammar", draw=0):
    """(splits, tokenizer) for ``entry``: the tokenizer is trained on the training split only."""
    parts = splits.golf_splits(corpus, draw)
    tokenizer = Tokenizer.train([document_text(d) for d in parts["train"]], vocab_size=entry.model["vocab_size"])
    return parts, tokenizer


def train_within(trainer, cpu_seconds, progress=False):
    """Train step by step until the recipe's steps are done or ``cpu_seconds`` of CPU time have
    passed (checked between steps). -> (CPU seconds used, whether the limit stopped it)."""
    bar = progress_bar(trainer.config.steps, progress, unit="step")
    start, stopped = time.process_time(), False
    trainer.model.train()
    while trainer.step < trainer.config.steps:
        if time.process_time() - start >= cpu_seconds:
            stopped = True
            break
        loss, _ = trainer.train_step()
        if bar is not None:
            bar.set_postfix(loss=f"{loss:.3f}", cpu_s=f"{time.process_time() - start:.0f}")
            bar.update(1)
    if bar is not None:
        bar.close()
    return time.process_time() - start, stopped


def grade(entry, split="validation", budget_bytes=BUDGET_BYTES, cpu_seconds=CPU_SECONDS, corpus="grammar",
          progress=False, draw=0):
    """The row of ``entry`` scored on ``split`` ("validation", the students'; "test", the
    leaderboard's): bits_per_byte, bytes, train_cpu_seconds, steps_done, stopped_at_limit,
    precision, seed (and the budgets it ran under). ``draw``: the grammar corpus's seed."""
    if entry.code:
        raise InvalidValue(f"entry {entry.name!r} is a code-track entry (model.code): its module runs "
                           "in the grader's sandbox, python -m minishare.grader grade --golf SUBMISSION")
    if split not in splits.SPLITS:
        raise InvalidValue(f"split must be one of {', '.join(splits.SPLITS)}, got {split!r}")
    safeio.integer(budget_bytes, "the byte budget")
    safeio.number(cpu_seconds, "the CPU-time limit", "be a number of seconds > 0", lambda s: s > 0)
    parts, tokenizer = prepare(entry, corpus, draw)
    n_bytes = budget.check_budget(entry, tokenizer.vocab_size, budget_bytes)      # before any training
    model, trained = train_entry(entry, parts, tokenizer, cpu_seconds, progress)
    quantize.quantize_(model, entry.precision)
    result = score_entry(entry, model, parts[split], tokenizer)
    return {"name": entry.name, "split": split, "bits_per_byte": result["bits_per_byte"], "bytes": n_bytes,
            "budget_bytes": budget_bytes, **trained, "precision": entry.precision, "seed": entry.recipe["seed"],
            "test_iterations": entry.test_iterations, "vocab_size": tokenizer.vocab_size,
            "train_documents": len(parts["train"]), "scored_tokens": result["tokens"],
            "scored_bytes": result["bytes"]}


def train_entry(entry, parts, tokenizer, cpu_seconds=CPU_SECONDS, progress=False):
    """(the trained model, unquantized; {train_cpu_seconds, cpu_seconds_limit, steps_done, steps,
    stopped_at_limit}): ``entry``'s model built from its seed and trained on ``parts["train"]``."""
    recipe = entry.recipe
    ms_random.manual_seed(recipe["seed"])
    model = designs.build(entry, tokenizer.vocab_size)
    looped = isinstance(model, designs.LoopedLM)       # its depth drawn at every step, mean N
    task = LanguageModelingTask(parts["train"], parts["validation"], tokenizer, recipe["batch_size"],
                                recipe["seq_len"], recipe["seed"],
                                mean_iterations=model.mean_iterations if looped else None)
    trainer = Trainer(model, task, entry.train_config())
    cpu, stopped = train_within(trainer, cpu_seconds, progress)
    return model, {"train_cpu_seconds": cpu, "cpu_seconds_limit": cpu_seconds, "steps_done": trainer.step,
                   "steps": recipe["steps"], "stopped_at_limit": stopped}


def score_entry(entry, model, documents, tokenizer):
    """Bits per byte of the stored ``model`` on ``documents`` (in evaluation mode: a looped entry
    runs at its ``test_iterations``)."""
    return score.bits_per_byte(model, documents, tokenizer, entry.recipe["seq_len"])
