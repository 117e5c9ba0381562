"""Toy sequence-to-sequence tasks: every target checked by an independent computation (int sums, a
SCAN interpreter written here), and teacher-forcing batches."""
import numpy as np
import pytest

from minishare.data.seq2seq import (BOS_ID, EOS_ID, PAD_ID, TASKS, batches, collate, examples,
                                    get_task)


def samples(task, n=500, seed=0):
    rng = np.random.default_rng(seed)
    return [task.sample(rng) for _ in range(n)]


def test_vocabularies_start_with_pad_bos_eos():
    assert (PAD_ID, BOS_ID, EOS_ID) == (0, 1, 2)
    for name in TASKS:
        task = get_task(name)
        assert task.vocab[:3] == ("<pad>", "<bos>", "<eos>")
        assert len(set(task.vocab)) == task.vocab_size


def test_copy_reverse_sort():
    for source, target in samples(get_task("copy", min_length=2, max_length=6, n_symbols=5)):
        assert target == source and 2 <= len(source) <= 6 and set(source) <= set("abcde")
    for source, target in samples(get_task("reverse")):
        assert target == [source[i] for i in range(len(source) - 1, -1, -1)]
    for source, target in samples(get_task("sort")):
        assert sorted(target) == sorted(source)                      # same letters
        assert all(ord(x) <= ord(y) for x, y in zip(target, target[1:]))


def test_addition_targets_are_the_sums():
    lengths = set()
    for source, target in samples(get_task("addition", max_digits=4), n=2000):
        left, right = "".join(source).split("+")
        assert "".join(target) == str(int(left) + int(right))
        for number in (left, right):
            assert number == "0" or not number.startswith("0")
            lengths.add(len(number))
    assert lengths == {1, 2, 3, 4}


def interpret_scan(command):
    """SCAN's semantics, from Lake & Baroni (2018), Fig. 6, for one command string."""
    words = command.split()
    for conjunction in ("and", "after"):
        if conjunction in words:
            k = words.index(conjunction)
            first, second = (interpret_scan(" ".join(part)) for part in (words[:k], words[k + 1:]))
            return first + second if conjunction == "and" else second + first
    if words[-1] in ("twice", "thrice"):
        return interpret_scan(" ".join(words[:-1])) * (2 if words[-1] == "twice" else 3)
    action = [] if words[0] == "turn" else [words[0].upper()]
    if len(words) == 1:
        return action
    turn = ["LTURN" if words[-1] == "left" else "RTURN"]
    if words[1] == "opposite":
        return turn + turn + action
    if words[1] == "around":
        return (turn + action) * 4
    return turn + action


def test_interpreter_on_hand_worked_commands():
    assert interpret_scan("jump twice and walk left") == ["JUMP", "JUMP", "LTURN", "WALK"]
    assert interpret_scan("turn left twice") == ["LTURN", "LTURN"]
    assert interpret_scan("jump opposite left after walk around left") == \
        ["LTURN", "WALK"] * 4 + ["LTURN", "LTURN", "JUMP"]


def test_scan_targets_match_the_interpreter():
    words_seen = set()
    for command, actions in samples(get_task("scan"), n=3000):
        assert actions == interpret_scan(" ".join(command)), command
        words_seen.update(command)
    assert words_seen == {"walk", "look", "run", "jump", "turn", "left", "right", "opposite",
                          "around", "twice", "thrice", "and", "after"}


def test_examples_are_deterministic_per_seed():
    for name in TASKS:
        task = get_task(name)
        assert examples(task, 50, seed=1) == examples(task, 50, seed=1)
        assert examples(task, 50, seed=1) != examples(task, 50, seed=2)


def test_collate_builds_teacher_forcing_arrays():
    batch = collate([([5, 6, 7], [8]), ([9], [10, 11, 12])])
    assert batch["src"].tolist() == [[5, 6, 7], [9, 0, 0]]
    assert batch["tgt_in"].tolist() == [[1, 8, 0, 0], [1, 10, 11, 12]]
    assert batch["tgt_out"].tolist() == [[8, 2, 0, 0], [10, 11, 12, 2]]
    assert all(array.dtype == np.int64 for array in batch.values())
    padded = collate([([5], [8])], pad_to=4)
    assert padded["src"].shape == padded["tgt_in"].shape == padded["tgt_out"].shape == (1, 4)
    with pytest.raises(ValueError, match="pad_to=1"):
        collate([([5, 6], [8])], pad_to=1)


def test_batches_decode_back_to_the_samples():
    task = get_task("addition")
    batch_list = list(batches(task, batch_size=8, n_batches=3, seed=4))
    assert len(batch_list) == 3 and all(b["src"].shape[0] == 8 for b in batch_list)
    pairs = examples(task, 24, seed=4)
    for row, (source, target) in enumerate(pairs[8:16]):
        batch = batch_list[1]
        assert task.decode(batch["src"][row]) == task.decode(source)
        assert task.decode(batch["tgt_out"][row]) == task.decode(target)
        assert task.encode(task.decode(batch["tgt_in"][row])) == target


def test_bad_names_and_symbols_are_refused():
    with pytest.raises(ValueError, match="unknown task 'translate'"):
        get_task("translate")
    with pytest.raises(ValueError, match="'z' is not in the copy vocabulary"):
        get_task("copy", n_symbols=3).encode(["a", "z"])
    with pytest.raises(ValueError, match="min_length"):
        get_task("reverse", min_length=0)
