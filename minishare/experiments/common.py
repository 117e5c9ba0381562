"""What the experiments add to a run (``minishare.run``): how a report names a corpus, and the
vocabulary size a run's tokenizer will have."""
from minishare.run.build import GRAMMARS, corpus_documents, load_tokenizer


def corpus_name(corpus):
    """How a report names a corpus of ``corpus_documents``."""
    if corpus == "default":
        return "embedded corpus (Python's documentation)"
    if corpus in GRAMMARS:
        return f"synthetic {corpus} corpus (a day's events in stories at several places, agreement across relative clauses)"
    return f"corpus {corpus}"


def tokenizer_vocab_size(corpus, vocab_size):
    """V of the tokenizer a run on ``corpus`` trains when asked for ``vocab_size``: fewer when the
    corpus has fewer distinct words than that (at 1,000 asked: grammar 317, grammar-facts 529)."""
    return load_tokenizer(corpus_documents(corpus), vocab_size).vocab_size
