"""The class competition: the best language model in a budget of bytes, scored by the grader.

An entry (``entry``) is a JSON declaration of a decoder-only LM and its training recipe. The grader
(``grade``) refuses it before training if its stored bytes are over the budget (``budget``: each
distinct tensor once, at the declared precision), trains it within a CPU-time limit on the
training split alone (``splits``), stores its weights at that precision (``quantize``) and scores
held-out bits per byte (``score``). ``python -m minishare golf ENTRY`` scores an entry on the
visible validation split; ``minishare/golf/examples/`` holds two entries to start from, a
not-shared baseline and an ALBERT-style all-shared model.
"""
from minishare.golf.budget import entry_bytes, stored_bytes
from minishare.golf.entry import Entry, load_entry, parse_entry
from minishare.golf.run import BUDGET_BYTES, CPU_SECONDS, grade

__all__ = ["Entry", "load_entry", "parse_entry", "entry_bytes", "stored_bytes", "grade", "BUDGET_BYTES",
           "CPU_SECONDS"]
