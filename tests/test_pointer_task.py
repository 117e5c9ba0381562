"""The pointer-chasing task: hand-worked examples, every sample checked by a walk written here, the
knobs' errors, and the no-model baselines on examples whose rates are counted by hand."""
import numpy as np
import pytest

from minishare.data.seq2seq import EOS_ID, TASKS, PointerTask, examples, follow, get_task
from minishare.tasks import Seq2SeqTask

# f(a) = c, f(b) = a, f(c) = d, f(d) = b: one cycle a -> c -> d -> b -> a
HAND_F = {"a": "c", "b": "a", "c": "d", "d": "b"}
HAND_SOURCE = ["b>a", "d>b", "a>c", "c>d"]


def walk(source, hops):
    """The target read off a source by hand's method: find the pair that starts with the current
    letter, move to its second letter, ``hops`` times."""
    letter = source[-1]
    for _ in range(hops):
        (letter,) = [pair[2] for pair in source[:-1] if pair[0] == letter]
    return letter


def samples(task, n=500, seed=0):
    rng = np.random.default_rng(seed)
    return [task.sample(rng) for _ in range(n)]


def test_follow_on_a_hand_worked_function():
    assert follow(HAND_F, "a", 0) == "a"
    assert follow(HAND_F, "a", 1) == "c"
    assert follow(HAND_F, "a", 2) == "d"
    assert follow(HAND_F, "b", 2) == "c"            # b -> a -> c
    assert follow(HAND_F, "d", 4) == "d"            # once round the cycle
    assert walk(HAND_SOURCE + ["a"], 2) == "d"
    assert walk(HAND_SOURCE + ["c"], 1) == "d"


def test_samples_are_one_cycle_written_as_pairs_and_the_target_is_the_walk():
    for hops, n_symbols in ((1, 2), (2, 5), (3, 8), (13, 26)):
        task = get_task("pointer", hops=hops, n_symbols=n_symbols)
        letters = [chr(ord("a") + i) for i in range(n_symbols)]
        for source, target in samples(task, n=200):
            *pairs, start = source
            assert len(pairs) == n_symbols and start in letters
            assert sorted(p[0] for p in pairs) == letters           # every letter once as a key
            assert sorted(p[2] for p in pairs) == letters           # and once as a value
            f = {p[0]: p[2] for p in pairs}
            visited, letter = [], start
            for _ in range(n_symbols):
                visited.append(letter)
                letter = f[letter]
            assert sorted(visited) == letters                        # one cycle through all of them
            assert target == [walk(source, hops)]
            assert target[0] not in visited[:hops]                   # the chain never closes early


def test_target_is_always_one_valid_letter():
    task = get_task("pointer", hops=2, n_symbols=6)
    assert task.vocab_size == 3 + 6 + 6 * 6                          # specials, letters, pairs
    for source, target in samples(task, n=300, seed=3):
        assert len(target) == 1 and target[0] in "abcdef"
        task.encode(source + target)                                 # every symbol in the vocabulary


def test_every_target_letter_but_the_start_occurs():
    seen = {}
    for source, target in samples(get_task("pointer", hops=2, n_symbols=5), n=2000, seed=1):
        seen.setdefault(source[-1], set()).add(target[0])
    assert seen == {s: set("abcde") - {s} for s in "abcde"}


def test_examples_are_deterministic_per_seed():
    task = get_task("pointer")
    assert "pointer" in TASKS and isinstance(task, PointerTask)
    assert examples(task, 50, seed=1) == examples(task, 50, seed=1)
    assert examples(task, 50, seed=1) != examples(task, 50, seed=2)


@pytest.mark.parametrize("options, message", [
    (dict(hops=0), "hops must be an int between 1 and n_symbols // 2 = 4"),
    (dict(hops=5), "hops must be an int between 1 and n_symbols // 2 = 4"),
    (dict(hops=3, n_symbols=5), "n_symbols // 2 = 2"),
    (dict(hops=2.0), "hops must be an int"),
    (dict(hops=True), "hops must be an int"),
    (dict(n_symbols=1, hops=1), "n_symbols must be an int between 2 and 26, got 1"),
    (dict(n_symbols=27), "n_symbols must be an int between 2 and 26, got 27"),
    (dict(n_symbols="8"), "n_symbols must be an int"),
])
def test_bad_knobs_are_refused_by_name(options, message):
    with pytest.raises(ValueError, match=message):
        get_task("pointer", **options)


def test_baselines_on_hand_made_examples():
    # targets chosen by hand: two "d" (the two-hop answer from a), then s itself, then f(s)
    pairs = [(HAND_SOURCE + ["a"], ["d"]), (HAND_SOURCE + ["b"], ["d"]),
             (HAND_SOURCE + ["c"], ["c"]), (HAND_SOURCE + ["d"], ["b"])]
    # start letters a b c d; one hop short (f(s) at two hops): c a d b
    assert PointerTask(hops=2, n_symbols=4).baselines(pairs) == {
        "most frequent letter": 2 / 4, "start letter": 1 / 4, "one hop short": 1 / 4}
    # with one hop, "one hop short" is the start letter itself
    assert PointerTask(hops=1, n_symbols=4).baselines(pairs[2:3]) == {
        "most frequent letter": 1.0, "start letter": 1.0, "one hop short": 1.0}
    with pytest.raises(ValueError, match="at least one example"):
        PointerTask().baselines([])


def test_no_rule_without_the_lookups_beats_chance_on_samples():
    task = get_task("pointer", hops=3, n_symbols=8)
    rates = task.baselines(samples(task, n=2000, seed=5))
    assert rates["start letter"] == rates["one hop short"] == 0.0
    assert rates["most frequent letter"] < 0.2          # each letter is the target 1/8 of the time


def test_the_seq2seq_trainer_task_batches_it():
    t = Seq2SeqTask("pointer", batch_size=4, seed=0)
    batch = t.batch(0)
    assert batch["src"].shape == (4, 8 + 1) and batch["tgt_out"].shape == (4, 2)
    assert (batch["tgt_out"][:, 1] == EOS_ID).all()
    for row in range(4):
        source = t.task.decode(batch["src"][row])
        assert t.task.decode(batch["tgt_out"][row]) == [walk(source, 3)]
