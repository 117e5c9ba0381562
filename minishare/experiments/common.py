"""The pieces every experiment needs: corpus, tokenizer, model and task from a few settings, and
``run_training``, one training run with its outputs on disk."""
import json
import os

from minishare import checkpoint, data, random as ms_random
from minishare.models import AlbertConfig, AlbertForPreTraining, DecoderLM, EncoderDecoderModel, TransformerConfig
from minishare.tasks import LanguageModelingTask, PretrainingTask, Seq2SeqTask
from minishare.train import TrainConfig, Trainer, save_history

SEQ2SEQ_TASKS = ("copy", "reverse", "sort", "addition", "scan")


def corpus_documents(corpus="default", seed=0):
    """'default' (Python's own documentation), 'grammar' (synthetic stories) or a path."""
    if corpus == "default":
        return data.default_corpus()
    if corpus == "grammar":
        return data.grammar_corpus(2000, seed=seed)
    return data.load_text(corpus)


def load_tokenizer(documents, vocab_size, path=None):
    """A BPE tokenizer trained on ``documents`` (deterministic, and under a second on the default
    corpus, so it is retrained rather than cached); saved to ``path`` when given."""
    tokenizer = data.Tokenizer.train([" ".join(d) for d in documents], vocab_size=vocab_size)
    if path:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        tokenizer.save(path)
    return tokenizer


def build_model(task, config):
    """The model class a task needs, from its configuration."""
    if task == "pretrain":
        return AlbertForPreTraining(config)
    return DecoderLM(config) if task == "lm" else EncoderDecoderModel(config)


def make_config(task, vocab_size, preset="albert-tiny", overrides=None, seq_len=64):
    overrides = dict(overrides or {})
    if task == "pretrain":
        return AlbertConfig.from_preset(preset, vocab_size=vocab_size,
                                        max_position_embeddings=max(seq_len, 128), **overrides)
    base = dict(vocab_size=vocab_size, hidden_size=64, num_attention_heads=4, intermediate_size=256,
                num_hidden_layers=3, max_position_embeddings=max(seq_len, 128))
    return TransformerConfig(**{**base, **overrides})


def make_task(task, seed, batch_size, seq_len, objective="sop", corpus="default", vocab_size=1000,
              tokenizer_path=None):
    """(task object, vocabulary size) for a task name."""
    if task in SEQ2SEQ_TASKS:
        t = Seq2SeqTask(task, batch_size=batch_size, seed=seed)
        return t, t.task.vocab_size
    documents = corpus_documents(corpus, seed)
    tokenizer = load_tokenizer(documents, vocab_size, tokenizer_path)
    train_docs, eval_docs = data.split_documents(documents, eval_fraction=0.1, seed=0)
    if task == "pretrain":
        return PretrainingTask(train_docs, eval_docs, tokenizer, objective, batch_size, seq_len, seed), \
            tokenizer.vocab_size
    if task == "lm":
        return LanguageModelingTask(train_docs, eval_docs, tokenizer, batch_size, seq_len, seed), \
            tokenizer.vocab_size
    raise ValueError(f"unknown task {task!r}: choose pretrain, lm or one of {', '.join(SEQ2SEQ_TASKS)}")


def run_training(task="pretrain", preset="albert-tiny", overrides=None, objective="sop",
                 corpus="default", vocab_size=1000, seq_len=64, steps=300, batch_size=32, lr=1e-3,
                 optimizer="adamw", eval_every=100, seed=0, out="runs/train", resume=False,
                 progress=True, warmup_steps=None):
    """Train one model and write ``config.json``, ``history.csv`` and ``checkpoint.npz`` (weights
    and training state) to ``out``. With ``resume``, continue from that checkpoint exactly.
    Returns {"model", "trainer", "history", "final"}."""
    os.makedirs(out, exist_ok=True)
    t, V = make_task(task, seed, batch_size, seq_len, objective, corpus, vocab_size,
                     tokenizer_path=os.path.join(out, "tokenizer.json"))
    ms_random.manual_seed(seed)
    ckpt = os.path.join(out, "checkpoint.npz")
    train_config = TrainConfig(steps=steps, lr=lr, optimizer=optimizer, eval_every=eval_every,
                               warmup_steps=max(1, steps // 10) if warmup_steps is None else warmup_steps,
                               progress=progress)
    if resume:
        model, state = checkpoint.load(ckpt, with_training_state=True)
        trainer = Trainer(model, t, train_config)
        trainer.load_state_dict(state)
    else:
        model = build_model(task, make_config(task, V, preset, overrides, seq_len))
        trainer = Trainer(model, t, train_config)
    history = trainer.train()
    checkpoint.save(model, ckpt, trainer.state_dict())
    save_history(history, os.path.join(out, "history.csv"))
    settings = dict(task=task, preset=preset, overrides=overrides, objective=objective, corpus=corpus,
                    vocab_size=V, seq_len=seq_len, steps=steps, batch_size=batch_size, lr=lr,
                    optimizer=optimizer, seed=seed, model=model.config.to_dict())
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(settings, f, indent=1, default=str)
    evals = [row for row in history if any(k.startswith("eval_") for k in row)]
    final = {k: v for k, v in (evals[-1] if evals else history[-1]).items()}
    return {"model": model, "trainer": trainer, "history": history, "final": final}
