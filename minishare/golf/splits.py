"""The competition's text: a training split for the entries, a visible validation split for the
students and a hidden test split for the leaderboard.

All three come from one of the competition's two settings (``SETTINGS``): the grammar corpus
(``minishare.run.build.GRAMMARS``: the same 2,000 stories for every run) or natural text, the
"default" corpus of the course (Python's embedded documentation, ``data.default_corpus``). The
setting is the grader's to name (``run.grade``'s ``corpus``; ``--corpus`` of ``grade --golf``,
``batch --golf`` and ``python -m minishare golf``; a Gradescope zip grades the grammar corpus), not the entry's: a leaderboard compares entries on one text, so an entry that could
choose its text would choose its opponents. Each is split as every run of the course splits it
(``data.split_documents``): the held-out stories share no sentence with the training stories. The
held-out documents are then dealt alternately, by their order in the corpus, to validation (the 1st,
3rd, ...) and test (the 2nd, 4th, ...): two halves of the same distribution, neither seen in
training.

The grader trains every entry on the training split alone; the test split is never given to an
entry: it is read only by the grader's scoring, after training and quantization, in the grader's own
process. (Here, in the repository, the split is hidden by that rule, not by secrecy: the corpus is
code anyone can run.) A class grader draws its grammar stories with a seed of its own (``draw``; a
Gradescope zip holds one, readable by root alone): the code track runs a submission's module, which
could rebuild the public draw's test stories, so there the rule must be secrecy as well.
"""
from minishare import data, safeio
from minishare.errors import InvalidValue
from minishare.run.build import corpus_documents

SETTINGS = ("grammar", "default")     # the grammar corpus; natural text (Python's documentation)
SPLITS = ("validation", "test")


def golf_splits(corpus="grammar", draw=0):
    """{"train", "validation", "test"}: lists of documents (each a list of sentences); ``draw``: the
    seed of the grammar corpus's stories (0: the course's, ``corpus_documents``)."""
    if corpus not in SETTINGS:
        raise InvalidValue(f"the competition's corpus must be one of {', '.join(SETTINGS)}, got {corpus!r}")
    safeio.integer(draw, "the corpus draw", low=0, high=2 ** 32 - 1)
    if draw and corpus != "grammar":
        raise InvalidValue(f"only the grammar corpus can be drawn again; {corpus!r} is one fixed text")
    train, held_out = data.split_documents(corpus_documents(corpus, draw), eval_fraction=0.1, seed=0)
    return {"train": train, "validation": held_out[0::2], "test": held_out[1::2]}


def document_text(document):
    """A document's text: its sentences joined by single spaces, as the LM task reads it."""
    return " ".join(document)
