"""Toy sequence-to-sequence tasks for encoder-decoder models: copy, reverse, sort, addition, a
SCAN-like command language (Lake & Baroni, 2018) and pointer chasing, each with a small fixed
vocabulary.

A task maps a random source to its target, both lists of symbols (str); ``examples`` encodes them
to ids and ``collate`` pads a batch the way teacher forcing wants it:

    task = get_task("scan")
    task.sample(np.random.default_rng(0))   # (["turn", "opposite", "right"], ["RTURN", "RTURN"])
    batch = next(batches(task, batch_size=32, n_batches=100, seed=0))
    batch["src"]       # (B, S) source ids, PAD_ID after the end
    batch["tgt_in"]    # (B, T) BOS_ID, target ids        (the decoder's input)
    batch["tgt_out"]   # (B, T) target ids, EOS_ID        (what it must predict)

Every vocabulary starts with ``<pad> <bos> <eos>`` at ids 0, 1, 2. Everything random comes from
``numpy.random.default_rng(seed)``: the same seed gives the same examples.

Held-out problems are never trained on: ``examples(task, n, seed, held_out=True)`` draws only from
the tenth of all problems that ``holdout.is_held_out`` sets aside, and training (the default) only
from the rest, whatever the seed (``task.key`` names the problem, ``holdout`` says why).
"""
import string

import numpy as np

from minishare.checks import is_int
from minishare.data import holdout
from minishare.errors import InvalidValue

SPECIALS = ("<pad>", "<bos>", "<eos>")
PAD_ID, BOS_ID, EOS_ID = range(len(SPECIALS))


class Task:
    """A vocabulary (``SPECIALS`` then ``symbols``); each task adds ``sample(rng)``, which returns
    one random example as (source symbols, target symbols)."""

    name = None

    def __init__(self, symbols):
        self.vocab = SPECIALS + tuple(symbols)
        self._ids = {symbol: i for i, symbol in enumerate(self.vocab)}

    @property
    def vocab_size(self):
        return len(self.vocab)

    def encode(self, symbols):
        """Ids of a list of symbols; an unknown symbol raises ``ValueError``."""
        try:
            return [self._ids[symbol] for symbol in symbols]
        except KeyError as error:
            raise InvalidValue(f"{error.args[0]!r} is not in the {self.name} vocabulary") from None

    def key(self, example):
        """What makes an example (source, target) the problem it is, for the held-out split: its
        source, as a tuple."""
        return tuple(example[0])

    def decode(self, ids):
        """Symbols of ``ids`` (e.g. a model's output), stopping at the first ``<eos>`` and
        skipping ``<pad>`` and ``<bos>``."""
        symbols = []
        for i in ids:
            if i == EOS_ID:
                break
            if i >= len(SPECIALS):
                symbols.append(self.vocab[i])
        return symbols


class CopyTask(Task):
    """Copy a random string of ``min_length``..``max_length`` letters from an alphabet of the
    first ``n_symbols`` lowercase letters: "c a b" -> "c a b"."""

    name = "copy"

    def __init__(self, min_length=1, max_length=10, n_symbols=10):
        if not 1 <= min_length <= max_length:
            raise InvalidValue(f"need 1 <= min_length <= max_length, got {min_length}, {max_length}")
        if not 1 <= n_symbols <= 26:
            raise InvalidValue(f"n_symbols must be between 1 and 26, got {n_symbols}")
        super().__init__(string.ascii_lowercase[:n_symbols])
        self.min_length, self.max_length, self.n_symbols = min_length, max_length, n_symbols

    def target(self, source):
        return list(source)

    def sample(self, rng):
        length = int(rng.integers(self.min_length, self.max_length + 1))
        source = [self.vocab[len(SPECIALS) + i] for i in rng.integers(self.n_symbols, size=length)]
        return source, self.target(source)


class ReverseTask(CopyTask):
    """Reverse the string: "c a b" -> "b a c"."""

    name = "reverse"

    def target(self, source):
        return source[::-1]


class SortTask(CopyTask):
    """Sort the letters: "c a b" -> "a b c"."""

    name = "sort"

    def target(self, source):
        return sorted(source)


class AdditionTask(Task):
    """Add two numbers written digit by digit: "1 2 3 + 4 5" -> "1 6 8". Each operand has a length
    of 1..``max_digits`` digits, drawn uniformly, so short and long sums are equally common."""

    name = "addition"

    def __init__(self, max_digits=3):
        if max_digits < 1:
            raise InvalidValue(f"max_digits must be at least 1, got {max_digits}")
        super().__init__(list(string.digits) + ["+"])
        self.max_digits = max_digits

    def _number(self, rng):
        n_digits = int(rng.integers(1, self.max_digits + 1))
        return int(rng.integers(0 if n_digits == 1 else 10 ** (n_digits - 1), 10 ** n_digits))

    def sample(self, rng):
        a, b = self._number(rng), self._number(rng)
        return list(str(a)) + ["+"] + list(str(b)), list(str(a + b))

    def baselines(self, pairs):
        """Exact match on ``pairs`` (source, target symbols) of the rules that need no model,
        {rule: fraction}: "the larger operand" (right whenever the other is 0) and "no carries"
        (each column's digits summed mod 10, the sum a model gets before it learns to carry).
        The best of them is the task's no-model baseline."""
        if not pairs:
            raise InvalidValue("baselines needs at least one example")
        hits = {"the larger operand": 0, "no carries": 0}
        for source, target in pairs:
            plus = source.index("+")
            a, b = "".join(source[:plus]), "".join(source[plus + 1:])
            width = max(len(a), len(b))
            columns = [(int(x) + int(y)) % 10 for x, y in zip(a.zfill(width), b.zfill(width))]
            no_carry = str(int("".join(map(str, columns))))
            total = "".join(target)
            hits["the larger operand"] += str(max(int(a), int(b))) == total
            hits["no carries"] += no_carry == total
        return {rule: count / len(pairs) for rule, count in hits.items()}


class ScanTask(Task):
    """Translate a navigation command into actions, SCAN's grammar (Lake & Baroni, 2018)::

        command   := phrase | phrase "and" phrase | phrase "after" phrase
        phrase    := verb_part | verb_part "twice" | verb_part "thrice"
        verb_part := action | action direction | "turn" direction
                   | (action | "turn") ("opposite" | "around") direction
        action    := "walk" | "look" | "run" | "jump";  direction := "left" | "right"

    Meaning: an action emits its name in capitals; a direction first turns (LTURN or RTURN);
    "opposite" turns twice, then acts; "around" turns and acts four times; twice / thrice repeat
    a phrase; "x and y" does x then y; "x after y" does y then x.
    "jump twice and walk left" -> "JUMP JUMP LTURN WALK".
    """

    name = "scan"
    ACTIONS = {"walk": "WALK", "look": "LOOK", "run": "RUN", "jump": "JUMP"}
    TURNS = {"left": "LTURN", "right": "RTURN"}
    REPEATS = {"twice": 2, "thrice": 3}

    def __init__(self):
        words = [*self.ACTIONS, "turn", *self.TURNS, "opposite", "around", *self.REPEATS,
                 "and", "after"]
        super().__init__(words + list(self.ACTIONS.values()) + list(self.TURNS.values()))

    def _verb_part(self, rng):
        verb = [*self.ACTIONS, "turn"][rng.integers(len(self.ACTIONS) + 1)]
        act = [] if verb == "turn" else [self.ACTIONS[verb]]
        if verb != "turn" and rng.random() < 1 / 3:
            return [verb], act
        direction = list(self.TURNS)[rng.integers(2)]
        turn = [self.TURNS[direction]]
        how = ("", "opposite", "around")[rng.integers(3)]
        if how == "opposite":
            return [verb, how, direction], turn * 2 + act
        if how == "around":
            return [verb, how, direction], (turn + act) * 4
        return [verb, direction], turn + act

    def _phrase(self, rng):
        words, actions = self._verb_part(rng)
        repeat = ("", "twice", "thrice")[rng.integers(3)]
        if repeat:
            return words + [repeat], actions * self.REPEATS[repeat]
        return words, actions

    def sample(self, rng):
        first_words, first_actions = self._phrase(rng)
        conjunction = ("", "and", "after")[rng.integers(3)]
        if not conjunction:
            return first_words, first_actions
        second_words, second_actions = self._phrase(rng)
        words = first_words + [conjunction] + second_words
        if conjunction == "and":
            return words, first_actions + second_actions
        return words, second_actions + first_actions


class PointerTask(Task):
    """Follow a pointer ``hops`` times. A function f over the first ``n_symbols`` letters is
    written as one token per pair, "a>c" for f(a) = c, in random order, then comes a start letter
    s; the target is the one letter f^k(s), k = ``hops``. With f(a) = c, f(b) = a, f(c) = d,
    f(d) = b and two hops: "b>a d>b a>c c>d a" -> "d" (a -> c -> d).

    Each hop is one lookup: the token of the current letter's pair, found by attention, holds
    the next letter. A pair is one token (its embedding can hold key and value apart) so that no
    layer is spent tying a key to the value next to it; the hops are then the task's need for
    depth, its knob, and ``n_symbols`` (more pairs to tell apart) the one for width. The target is
    a single letter, so teacher forcing hands the decoder no part of the answer.

    f is one cycle through all n letters, drawn at random, so the chain from s never closes early:
    f^k(s) is none of s, f(s), ..., f^(k-1)(s), and every hop counts. Going backwards is a lookup
    too (the pair whose value is the current letter), and f^k = f^-(n-k) on an n-cycle, so more than
    n/2 hops would be no harder than fewer: ``hops`` is at most n/2. Without the lookups nothing
    beats chance: given s, f^k(s) is each of the other n - 1 letters with probability
    1/(n - 1) (``baselines`` scores the rules that need no model)."""

    name = "pointer"

    def __init__(self, hops=3, n_symbols=8):
        if not is_int(n_symbols) or not 2 <= n_symbols <= 26:
            raise InvalidValue(f"n_symbols must be an int between 2 and 26, got {n_symbols!r}")
        if not is_int(hops) or not 1 <= hops <= n_symbols // 2:
            raise InvalidValue(f"hops must be an int between 1 and n_symbols // 2 = {n_symbols // 2} "
                             f"(on a cycle of n letters, n - k hops backwards reach f^k), got {hops!r}")
        letters = string.ascii_lowercase[:n_symbols]
        super().__init__(list(letters) + [f"{key}>{value}" for key in letters for value in letters])
        self.hops, self.n_symbols, self.letters = hops, n_symbols, letters

    def sample(self, rng):
        cycle = [self.letters[i] for i in rng.permutation(self.n_symbols)]
        f = {key: cycle[(i + 1) % self.n_symbols] for i, key in enumerate(cycle)}
        keys = [self.letters[i] for i in rng.permutation(self.n_symbols)]   # the pairs' order
        start = self.letters[rng.integers(self.n_symbols)]
        return [f"{key}>{f[key]}" for key in keys] + [start], [follow(f, start, self.hops)]

    def key(self, example):
        """The problem is f and the start letter, whatever the order its pairs are written in."""
        source = example[0]
        return tuple(sorted(source[:-1])), source[-1]

    def baselines(self, pairs):
        """Exact match on ``pairs`` (source, target symbols) of the rules that need no model,
        {rule: fraction}: "most frequent letter" (always the target most common in ``pairs``, the
        best constant), "start letter" (s) and "one hop short" (f^(k-1)(s); s when hops = 1). The
        best of them is the task's no-model baseline."""
        if not pairs:
            raise InvalidValue("baselines needs at least one example")
        targets = [target[0] for _, target in pairs]
        common = max(set(targets), key=targets.count)
        guesses = {"most frequent letter": [], "start letter": [], "one hop short": []}
        for source, _ in pairs:
            f, start = dict(pair.split(">") for pair in source[:-1]), source[-1]
            guesses["most frequent letter"].append(common)
            guesses["start letter"].append(start)
            guesses["one hop short"].append(follow(f, start, self.hops - 1))
        return {rule: sum(g == t for g, t in zip(guess, targets)) / len(pairs)
                for rule, guess in guesses.items()}


def follow(f, start, hops):
    """f^hops(start): ``start`` after ``hops`` applications of ``f`` (a dict)."""
    for _ in range(hops):
        start = f[start]
    return start


TASKS = {task.name: task for task in (CopyTask, ReverseTask, SortTask, AdditionTask, ScanTask,
                                      PointerTask)}


def get_task(name, **options):
    """The task called ``name`` (a key of ``TASKS``), built with ``options``."""
    if name not in TASKS:
        raise InvalidValue(f"unknown task {name!r}; choose one of {sorted(TASKS)}")
    return TASKS[name](**options)


def examples(task, n, seed, held_out=False):
    """``n`` examples of ``task`` as (source ids, target ids), deterministic for ``seed``: training
    problems, or with ``held_out`` problems no training stream ever draws."""
    rng = np.random.default_rng(seed)
    return [tuple(map(task.encode, holdout.draw(task.sample, rng, held_out, task.key))) for _ in range(n)]


def collate(pairs, pad_to=None):
    """Pad (source ids, target ids) pairs into int64 arrays for teacher forcing:
    ``src`` (B, S); ``tgt_in`` = BOS + target and ``tgt_out`` = target + EOS, (B, T); both padded
    with ``PAD_ID`` to the longest sequence, or to ``pad_to`` for every array."""
    sources = [list(source) for source, _ in pairs]
    inputs = [[BOS_ID, *target] for _, target in pairs]
    outputs = [[*target, EOS_ID] for _, target in pairs]
    batch = {}
    for key, rows in (("src", sources), ("tgt_in", inputs), ("tgt_out", outputs)):
        longest = max(map(len, rows))
        length = longest if pad_to is None else pad_to
        if longest > length:
            raise InvalidValue(f"{key}: a sequence has {longest} ids, more than pad_to={pad_to}")
        array = np.full((len(rows), length), PAD_ID, dtype=np.int64)   # (B, S) or (B, T)
        for r, row in enumerate(rows):
            array[r, :len(row)] = row
        batch[key] = array
    return batch


def batches(task, batch_size, n_batches, seed, pad_to=None):
    """``n_batches`` freshly sampled batches of ``task`` (see ``collate``), deterministic for
    ``seed``."""
    pairs = examples(task, batch_size * n_batches, seed)
    for start in range(0, len(pairs), batch_size):
        yield collate(pairs[start:start + batch_size], pad_to)
