"""Pointer forests: follow the pointers until one points to itself. Chapter 14's task, whose
difficulty is a number a model can be tested beyond: the depth of a node.

A forest of ``n_chains`` chains over distinct letters (ids 0..``n_symbols``−1), every chain
``depth`` + 1 letters long: p_depth -> ... -> p_1 -> p_0, and the root p_0 points to itself. Each
letter is one token of two fields, (the letter, the letter it points to), and the tokens come in
random order. The label of every token is the root of its chain. With two chains of depth 2,
a -> b -> c -> c and d -> e -> f -> f, shuffled:

    tokens  (e, f) (c, c) (a, b) (f, f) (b, c) (d, e)
    labels     f      c      c      f      c      f          node depths 1 0 2 0 1 2

A node at depth d needs d lookups (one per pointer), or ⌈log₂ d⌉ with pointer doubling (every
node replacing its pointer by its pointer's pointer at once), so more depth needs more
iterations of a looped model, and a forest deeper than any in training asks for more iterations
than training ran. The answer stays put once found: a root's pointer is itself, so iterating more
does not move a node that has reached it.

Without the lookups: a root's label is itself and a depth-1 node's is its pointer, but beyond
that a rule that follows j < d pointers knows only that the answer is one of the roots, 1 in
``n_chains`` by guessing (``no_lookup_accuracy``).
"""
import numpy as np

from minishare.checks import is_int
from minishare.data import holdout
from minishare.errors import InvalidValue


class PointerForest:
    """Forests of ``n_chains`` chains over an alphabet of ``n_symbols`` letters. ``sample(rng,
    depth)`` draws one forest of that depth; ``batch(rng, batch_size, depth)`` draws many. Both
    draw training forests, or with ``held_out=True`` forests no training batch ever holds (the
    tenth of all forests that ``holdout.is_held_out`` sets aside, whatever the tokens' order)."""

    def __init__(self, n_symbols=32, n_chains=4):
        if not is_int(n_chains) or n_chains < 2:
            raise InvalidValue(f"n_chains must be an int >= 2 (one chain would make every label its "
                               f"one root), got {n_chains!r}")
        if not is_int(n_symbols) or n_symbols < 2 * n_chains:
            raise InvalidValue(f"n_symbols must be an int >= 2·n_chains = {2 * n_chains} (chains of depth "
                               f"1 at least), got {n_symbols!r}")
        self.n_symbols, self.n_chains = int(n_symbols), int(n_chains)

    @property
    def max_depth(self):
        """The deepest forest the alphabet holds: n_chains · (depth + 1) distinct letters."""
        return self.n_symbols // self.n_chains - 1

    def check_depth(self, depth):
        if not is_int(depth) or not 1 <= depth <= self.max_depth:
            raise InvalidValue(f"depth must be an int in 1..{self.max_depth} ({self.n_chains} chains of "
                               f"depth + 1 distinct letters out of {self.n_symbols}), got {depth!r}")
        return int(depth)

    def sample(self, rng, depth, held_out=False):
        """One forest: ids (T, 2) of (letter, pointer), labels (T,) the roots, depths (T,), with
        T = n_chains · (depth + 1), in random order. ``rng``: a ``numpy.random.Generator``;
        ``held_out``: a held-out forest instead of a training one."""
        depth = self.check_depth(depth)
        return holdout.draw(lambda rng: self._forest(rng, depth), rng, held_out, key=_pointers)

    def _forest(self, rng, depth):
        letters = rng.permutation(self.n_symbols)[:self.n_chains * (depth + 1)]
        chains = letters.reshape(self.n_chains, depth + 1)        # chains[c, d]: depth d, d = 0 the root
        pointers = np.concatenate([chains[:, :1], chains[:, :-1]], axis=1)   # depth d points to d − 1
        roots = np.broadcast_to(chains[:, :1], chains.shape)
        depths = np.broadcast_to(np.arange(depth + 1), chains.shape)
        order = rng.permutation(chains.size)
        ids = np.stack([chains.ravel(), pointers.ravel()], axis=1)[order]     # (T, 2)
        return ids.astype(np.int64), roots.ravel()[order].astype(np.int64), depths.ravel()[order]

    def batch(self, rng, batch_size, depth, held_out=False):
        """{"input_ids" (B, T, 2), "labels" (B, T), "depths" (B, T)}: ``batch_size`` forests."""
        ids, labels, depths = zip(*(self.sample(rng, depth, held_out) for _ in range(batch_size)))
        return {"input_ids": np.stack(ids), "labels": np.stack(labels), "depths": np.stack(depths)}

    def no_lookup_accuracy(self, depth):
        """The accuracy at nodes of ``depth`` of the best rule that follows fewer pointers than
        ``depth``: 1 for a root (its label is itself) and a depth-1 node (its pointer), else one of
        the n_chains roots guessed, 1 / n_chains."""
        return 1.0 if depth <= 1 else 1.0 / self.n_chains


def _pointers(forest):
    """The forest as a problem, for the held-out split: its (letter, pointer) pairs in sorted order."""
    return tuple(sorted(map(tuple, forest[0].tolist())))


def follow_to_root(ids):
    """The labels of a forest by following each pointer until it points to itself: ids (T, 2)
    -> roots (T,) (host ints). The task's definition, written as a loop."""
    pointer = {int(letter): int(target) for letter, target in ids}
    roots = []
    for letter, _ in ids:
        node = int(letter)
        while pointer[node] != node:
            node = pointer[node]
        roots.append(node)
    return np.array(roots, dtype=np.int64)
