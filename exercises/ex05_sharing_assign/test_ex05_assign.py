"""Cases of exercise 5: the paper's worked examples (M = 3, N = 6, Sec. 2), hand-worked schedules, and the
properties every plan must have, for every M of N up to 12.

Each case's probe calls ``assign`` (the student's module) and returns the schedules; its judge,
run by the grader, checks them. Without a judge, a case compares with the reference solution."""
from minishare.grader.cases import case, raises


def letters(schedule):
    return " ".join("ABCDEFGHIJKLMNOPQRSTUVWXYZ"[s] for s in schedule)


@case("ex05_task1")
def test_sequence_worked_example(assign):
    return assign.sequence(6, 3)


@test_sequence_worked_example.judge
def _(out, ref):
    assert letters(out) == "A A B B C C", letters(out)


@case("ex05_task1")
def test_sequence_when_m_does_not_divide_n(assign):
    return [assign.sequence(7, 3), assign.sequence(5, 2)]


@test_sequence_when_m_does_not_divide_n.judge
def _(out, ref):
    assert [letters(s) for s in out] == ["A A A B B C C", "A A A B B"], [letters(s) for s in out]


@case("ex05_task2")
def test_cycle_worked_example(assign):
    return [assign.cycle(6, 3), assign.cycle(7, 3)]


@test_cycle_worked_example.judge
def _(out, ref):
    assert [letters(s) for s in out] == ["A B C A B C", "A B C A B C A"], [letters(s) for s in out]


@case("ex05_task3")
def test_cycle_rev_worked_examples_both_rules(assign):
    return {"6 of 3": [assign.cycle_rev(6, 3), assign.cycle_rev(6, 3, rule="code")],
            "7 of 3": [assign.cycle_rev(7, 3), assign.cycle_rev(7, 3, rule="code")],
            "4 of 3, code": assign.cycle_rev(4, 3, rule="code")}


@test_cycle_rev_worked_examples_both_rules.judge
def _(out, ref):
    assert [letters(s) for s in out["6 of 3"]] == ["A B C C B A"] * 2
    assert [letters(s) for s in out["7 of 3"]] == ["A B C A B C C", "A B C A C B A"]
    assert letters(out["4 of 3, code"]) == "A C B A"


### BEGIN HIDDEN TESTS
def every_m_of_n(fn, **options):
    return {f"{N} {M}": fn(N, M, **options) for N in range(1, 13) for M in range(1, N + 1)}


@case("ex05_task1")
def test_sequence_properties_for_every_m_of_n(assign):
    return every_m_of_n(assign.sequence)


@test_sequence_properties_for_every_m_of_n.judge
def _(out, ref):
    for key, s in out.items():
        N, M = map(int, key.split())
        assert len(s) == N and s == sorted(s) and set(s) == set(range(M)), (N, M, s)
        sizes = [s.count(k) for k in range(M)]
        assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True), (N, M, s)


@case("ex05_task1")
def test_sequence_refuses_m_outside_1_to_n(assign):
    return [raises(ValueError, assign.sequence, 3, 4), raises(ValueError, assign.sequence, 3, 0)]


@case("ex05_task2")
def test_cycle_for_every_m_of_n(assign):
    return every_m_of_n(assign.cycle)


@test_cycle_for_every_m_of_n.judge
def _(out, ref):
    for key, s in out.items():
        N, M = map(int, key.split())
        assert s == [i % M for i in range(N)], (N, M, s)


@case("ex05_task2")
def test_cycle_refuses_more_sets_than_positions(assign):
    return [raises(ValueError, assign.cycle, 3, 4), raises(ValueError, assign.cycle, 3, 0)]


@case("ex05_task3")
def test_cycle_rev_properties_for_every_m_of_n(assign):
    return {"paper": every_m_of_n(assign.cycle_rev), "code": every_m_of_n(assign.cycle_rev, rule="code")}


@test_cycle_rev_properties_for_every_m_of_n.judge
def _(out, ref):
    for key in out["paper"]:
        N, M = map(int, key.split())
        paper, code = out["paper"][key], out["code"][key]
        for s in (paper, code):
            assert len(s) == N and set(s) == set(range(M)), (N, M, s)
        cycled = max(M, M * (-(-N // M) - 1))            # the paper's text: Cycle, then reversed
        assert paper == [i % M if i < cycled else M - 1 - (i - cycled) % M for i in range(N)], (N, M, paper)
        if N > M:
            assert code[:N - M] == [i % M for i in range(N - M)], (N, M, code)
            assert code[N - M:] == list(range(M - 1, -1, -1)), (N, M, code)
        else:
            assert code == list(range(N)), (N, M, code)


@case("ex05_task3")
def test_cycle_rev_refuses_an_unknown_rule(assign):
    return raises(ValueError, assign.cycle_rev, 6, 3, rule="fairseq")
### END HIDDEN TESTS
