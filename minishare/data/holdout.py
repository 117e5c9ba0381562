"""Held-out data that training can never draw, by construction.

A test set measures generalization only if its items were never trained on. Drawing training and
test items from one generator with two seeds does not ensure it: on addition with operands of up to
three digits, half of 256 test problems turned up in a run's training stream, so exact match was
partly memory. Filtering the test set afterwards depends on how long training runs. Instead the
space of items is split in two once and for all: an item (a sentence, an addition problem, a
forest) is held out when a hash of the item itself says so, a fixed tenth of every item that could
ever be drawn. A training stream draws only from the other nine tenths, so whatever its seed and
length, it never meets a held-out item::

    is_held_out("The dog wakes up near the boats.")       # True or False, the same in every process
    draw(task.sample, rng, held_out=True, key=task.key)   # a sample from the held-out part

The hash is BLAKE2b of the item's ``repr``; Python's own ``hash`` of a string changes from process
to process. Which items are held out looks random, so both parts follow the generator's
distribution (a subset of a tenth of its items, picked without looking at them).
"""
import hashlib

import numpy as np

from minishare.errors import InvalidValue

HELD_OUT_FRACTION = 0.1
MAX_TRIES = 10_000   # draws in a row on the wrong side before a space is called too small to split


def is_held_out(key, fraction=HELD_OUT_FRACTION):
    """Whether ``key`` (a str, or a tuple of str and int) lies in the held-out part: the first
    8 bytes of its BLAKE2b digest, read as a number in [0, 1), fall below ``fraction``."""
    digest = hashlib.blake2b(repr(key).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") < fraction * 2 ** 64


def draw(sample, rng, held_out, key=None):
    """``sample(rng)`` drawn again until the item lies on the chosen side: held out (``held_out``
    True) or training. ``key(item)`` is what is hashed (default the item itself): the problem, not
    how it is presented, e.g. a set of pairs whatever their order. Raises ``InvalidValue`` when
    ``MAX_TRIES`` draws in a row all land on the other side (a space of a handful of items may have
    none on one side)."""
    for _ in range(MAX_TRIES):
        item = sample(rng)
        if is_held_out(item if key is None else key(item)) == held_out:
            return item
    side = "held-out" if held_out else "training"
    raise InvalidValue(f"{MAX_TRIES} draws in a row found no {side} item: the space of items is too "
                       "small to hold some out (make the task larger)")


def held_out_documents(n_documents, eval_fraction=HELD_OUT_FRACTION, seed=0):
    """The indices of the documents a corpus of ``n_documents`` holds out (a set): a seeded
    permutation's first ``round(eval_fraction · n_documents)``, at least one and at least one fewer
    than all. ``data.split_documents`` splits with it, and the grammar corpus writes the stories at
    these indices from held-out sentences only."""
    if n_documents < 2:
        raise InvalidValue(f"need at least 2 documents to split, got {n_documents}")
    if not 0 < eval_fraction < 1:
        raise InvalidValue(f"eval_fraction must be between 0 and 1, got {eval_fraction}")
    n_eval = min(max(1, round(eval_fraction * n_documents)), n_documents - 1)
    return set(np.random.default_rng(seed).permutation(n_documents)[:n_eval].tolist())
