"""Runnable experiments: ``run_training`` behind ``python -m minishare train``, and the
``reproduce`` pipeline behind ``python -m minishare reproduce``."""
from minishare.experiments.common import build_model, corpus_documents, load_tokenizer, run_training

__all__ = ["build_model", "corpus_documents", "load_tokenizer", "run_training"]
