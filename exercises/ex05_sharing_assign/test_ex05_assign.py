"""Tests of exercise 5 against the paper's worked examples (papers.md), hand-worked schedules and
properties every plan must have."""
import pytest

from assign import cycle, cycle_rev, sequence


def letters(schedule):
    return " ".join("ABCDEFGHIJKLMNOPQRSTUVWXYZ"[s] for s in schedule)


@pytest.mark.ex05_task1
def test_sequence_worked_example():
    assert letters(sequence(6, 3)) == "A A B B C C"


@pytest.mark.ex05_task1
def test_sequence_when_m_does_not_divide_n():
    assert letters(sequence(7, 3)) == "A A A B B C C"
    assert letters(sequence(5, 2)) == "A A A B B"


@pytest.mark.ex05_task2
def test_cycle_worked_example():
    assert letters(cycle(6, 3)) == "A B C A B C"
    assert letters(cycle(7, 3)) == "A B C A B C A"


@pytest.mark.ex05_task3
def test_cycle_rev_worked_examples_both_rules():
    assert letters(cycle_rev(6, 3)) == letters(cycle_rev(6, 3, rule="code")) == "A B C C B A"
    assert letters(cycle_rev(7, 3)) == "A B C A B C C"
    assert letters(cycle_rev(7, 3, rule="code")) == "A B C A C B A"
    assert letters(cycle_rev(4, 3, rule="code")) == "A C B A"


### BEGIN HIDDEN TESTS
@pytest.mark.ex05_task1
def test_sequence_properties_for_every_m_of_n():
    for N in range(1, 13):
        for M in range(1, N + 1):
            s = sequence(N, M)
            assert len(s) == N and s == sorted(s) and set(s) == set(range(M)), (N, M)
            sizes = [s.count(k) for k in range(M)]
            assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True), (N, M)


@pytest.mark.ex05_task2
def test_cycle_extremes_and_refusals():
    assert cycle(5, 1) == [0] * 5 and cycle(4, 4) == [0, 1, 2, 3]
    with pytest.raises(ValueError):
        cycle(3, 4)


@pytest.mark.ex05_task3
def test_cycle_rev_properties_for_every_m_of_n():
    for N in range(1, 13):
        for M in range(1, N + 1):
            paper, code = cycle_rev(N, M), cycle_rev(N, M, rule="code")
            for s in (paper, code):
                assert len(s) == N and set(s) == set(range(M)), (N, M)
            assert paper[:M] == list(range(M)), (N, M)
            if N % M == 0:
                assert paper == code, (N, M)
                if N > M:
                    assert paper[0] == paper[-1] == 0, (N, M)   # first and last layer share
            if N > M:
                assert code[N - M:] == list(range(M - 1, -1, -1)), (N, M)
    with pytest.raises(ValueError):
        cycle_rev(6, 3, rule="fairseq")
### END HIDDEN TESTS
