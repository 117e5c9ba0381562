"""Runnable experiments: the ``reproduce`` pipeline behind ``python -m minishare reproduce``, built
on ``minishare.run`` (``run_training``, behind ``python -m minishare train``, whose names are
kept here for notebooks written against them)."""
from minishare.run.build import build_model, corpus_documents, load_tokenizer
from minishare.run.training import run_training

__all__ = ["build_model", "corpus_documents", "load_tokenizer", "run_training"]
