"""What a run is built from, by name: its corpus, tokenizer, task and model, from the few settings
a run records (``run_training``'s keywords, ``python -m minishare train``'s flags), and the run's
own defaults for them."""
import os

from minishare import data
from minishare.errors import InvalidValue
from minishare.models import AlbertConfig, AlbertForPreTraining, DecoderLM, EncoderDecoderModel, TransformerConfig
from minishare.tasks import LanguageModelingTask, PretrainingTask, Seq2SeqTask

SEQ2SEQ_TASKS = ("copy", "reverse", "sort", "addition", "scan", "pointer")


# The synthetic corpora by name: the grammar corpus's difficulty knobs (``data.grammar_corpus``).
# "grammar" is the pre-training corpus of the reproduction (settings.QUICK and FULL): ten nouns,
# six places as topics, relative clauses two deep. "grammar-facts" adds a hundred nouns whose
# transitive events have fixed objects (facts a model must store, where capacity matters) over
# five places.
GRAMMARS = {"grammar": {}, "grammar-facts": dict(nouns=100, depth=2, topics=5, facts=True)}


class RunDefaults:
    """A run's own defaults: the one place they are set, for ``run_training`` and the builders
    here (and, through ``run_training``, for ``python -m minishare train``). The training loop's
    (steps, learning rate, optimizer, warm-up) are ``TrainConfig``'s."""
    task, preset, objective, corpus = "pretrain", "albert-tiny", "sop", "default"
    vocab_size, seq_len, batch_size = 1000, 64, 32
    eval_every, save_every, seed = 100, 50, 0


def corpus_documents(corpus=RunDefaults.corpus, draw=0):
    """'default' (Python's own documentation), a synthetic corpus of ``GRAMMARS`` or a path. A
    synthetic corpus is the same 2,000 stories for every run (drawn with seed 0), like the others:
    a run's seed fixes its initialization, data order and masks, and every seed is scored on the
    same held-out stories. ``draw``: another seed for a synthetic corpus's stories (the
    competition's grader draws its own, ``golf.splits``). A file must hold at least two documents: a
    run holds some out, and finding that out after the tokenizer's training would cost minutes on a
    large file."""
    if corpus == "default":
        return data.default_corpus()
    if corpus in GRAMMARS:
        return data.grammar_corpus(2000, seed=draw, **GRAMMARS[corpus])
    documents = data.load_text(corpus)
    if len(documents) < 2:
        raise InvalidValue(f"{corpus}: holds {len(documents)} document; a run holds some documents out for "
                           "evaluation, so it needs at least 2 (documents are separated by blank lines)")
    return documents


def load_tokenizer(documents, vocab_size, path=None, progress=False):
    """A BPE tokenizer trained on ``documents`` (deterministic, and under a second on the default
    corpus, so it is retrained rather than cached); saved to ``path`` when given. ``progress``:
    a bar of the merges (a large corpus of your own can take minutes)."""
    tokenizer = data.Tokenizer.train((" ".join(d) for d in documents), vocab_size=vocab_size,
                                     progress=progress)
    if path:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        tokenizer.save(path)
    return tokenizer


def task_data(task, t, documents):
    """What a run's data is, for its digest: the corpus's documents, or a toy task's held-out
    examples and first batch (which the task's generator, not a file, decides)."""
    if task in SEQ2SEQ_TASKS:
        return {"eval": t.eval_pairs, "first_batch": t.batch(0)}
    return documents


def build_model(task, config):
    """The model class a task needs, from its configuration."""
    if task == "pretrain":
        return AlbertForPreTraining(config)
    return DecoderLM(config) if task == "lm" else EncoderDecoderModel(config)


def make_config(task, vocab_size, preset=RunDefaults.preset, overrides=None, seq_len=RunDefaults.seq_len):
    """The model configuration of a task: ALBERT's ``preset`` for pretrain, a small Transformer for
    the others; ``overrides``: model fields to set."""
    overrides = dict(overrides or {})
    if task == "pretrain":
        return AlbertConfig.from_preset(preset, vocab_size=vocab_size,
                                        max_position_embeddings=max(seq_len, 128), **overrides)
    base = dict(vocab_size=vocab_size, hidden_size=64, num_attention_heads=4, intermediate_size=256,
                num_hidden_layers=3, max_position_embeddings=max(seq_len, 128))
    return TransformerConfig(**{**base, **overrides})


def make_task(task, seed, batch_size, seq_len, objective=RunDefaults.objective, corpus=RunDefaults.corpus,
              vocab_size=RunDefaults.vocab_size, tokenizer_path=None, tokenizer=None, documents=None):
    """(task object, vocabulary size) for a task name; ``tokenizer``: use this one (a resumed
    run's) instead of training one; ``documents``: the corpus's, when read already."""
    if task in SEQ2SEQ_TASKS:
        t = Seq2SeqTask(task, batch_size=batch_size, seed=seed)
        return t, t.task.vocab_size
    documents = corpus_documents(corpus) if documents is None else documents
    if tokenizer is None:
        tokenizer = load_tokenizer(documents, vocab_size, tokenizer_path)
    train_docs, eval_docs = data.split_documents(documents, eval_fraction=0.1, seed=0)
    if task == "pretrain":
        return PretrainingTask(train_docs, eval_docs, tokenizer, objective, batch_size, seq_len, seed), \
            tokenizer.vocab_size
    if task == "lm":
        return LanguageModelingTask(train_docs, eval_docs, tokenizer, batch_size, seq_len, seed), \
            tokenizer.vocab_size
    raise InvalidValue(f"unknown task {task!r}: choose pretrain, lm or one of {', '.join(SEQ2SEQ_TASKS)}")
