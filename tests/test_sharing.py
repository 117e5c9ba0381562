"""Tests for minishare.sharing against the papers' definitions, written out independently here."""

import math

import pytest

from minishare import sharing
from minishare.sharing import COMPONENTS, Plan, assign


# Takase & Kiyono (arXiv 2104.06022), Sec. 2: the strategies as the paper states them, in its
# 1-based layer numbering: layer i either creates a new layer or reuses an earlier layer's
# parameters. Written as the paper's procedure, not as the closed forms in sharing.py.
def paper_assignment(strategy, N, M):
    enc = {}  # 1-based layer -> parameter set (0-based, in order of creation)
    created = 0

    def new():
        nonlocal created
        created += 1
        return created - 1

    for i in range(1, N + 1):
        if i == 1:
            enc[i] = new()
        elif strategy == "sequence":  # the same parameters for sequential floor(N/M) layers
            enc[i] = new() if (i - 1) % (N // M) == 0 else enc[i - 1]
        elif strategy == "cycle":  # M independent layers, restacked in the same order
            enc[i] = new() if i <= M else enc[(i - 1) % M + 1]
        else:  # cycle-rev: as Cycle up to M * (ceil(N/M) - 1) layers, then reverse order
            if i <= M:
                enc[i] = new()
            elif i <= M * (math.ceil(N / M) - 1):
                enc[i] = enc[(i - 1) % M + 1]
            else:
                enc[i] = enc[M - (i - 1) % M]
    return [enc[i] for i in range(1, N + 1)], created


# The authors' released fairseq code (github.com/takase/share_layer_params, share_type
# 'cycle_reverse'), written out as its procedure: it is given s = positions per set and makes
# M = ceil(N / s) new layers, then N - 2M copies in Cycle order, then copies of the first M layers
# taken from the last one backwards until N positions are filled.
def code_assignment(N, s):
    M = -(-N // s)
    layers = list(range(M))
    layers += [i % M for i in range(N - 2 * M)]
    base = layers[:M]
    layers += [base[-((i % M) + 1)] for i in range(N - len(layers))]
    return layers, M


# (M, N) -> hand-derived assignments, A = 0, B = 1, ...
HAND = {
    (3, 6): {"sequence": "AABBCC", "cycle": "ABCABC", "cycle-rev": "ABCCBA"},  # paper's example
    (2, 4): {"sequence": "AABB", "cycle": "ABAB", "cycle-rev": "ABBA"},
    (2, 6): {"sequence": "AAABBB", "cycle": "ABABAB", "cycle-rev": "ABABBA"},
    (3, 9): {"sequence": "AAABBBCCC", "cycle": "ABCABCABC", "cycle-rev": "ABCABCCBA"},
    (1, 6): {"sequence": "AAAAAA", "cycle": "AAAAAA", "cycle-rev": "AAAAAA"},
    (6, 6): {"sequence": "ABCDEF", "cycle": "ABCDEF", "cycle-rev": "ABCDEF"},
    (6, 12): {"sequence": "AABBCCDDEEFF", "cycle": "ABCDEFABCDEF", "cycle-rev": "ABCDEFFEDCBA"},
    # N not a multiple of M: Cycle's last round is partial; Cycle (rev) reverses after
    # M * (ceil(N/M) - 1) layers, so its last round is partial and starts from the last set.
    (3, 7): {"cycle": "ABCABCA", "cycle-rev": "ABCABCC"},
    (3, 8): {"cycle": "ABCABCAB", "cycle-rev": "ABCABCCB"},
    (4, 6): {"cycle": "ABCDAB", "cycle-rev": "ABCDDC"},
    (2, 5): {"cycle": "ABABA", "cycle-rev": "ABABB"},
}
# Cycle (rev) as the authors' code builds it: the same where M divides N; otherwise Cycle up to
# max(M, N - M) positions and the last min(M, N - M) reversed from the last set.
for (M, N), code in {(3, 6): "ABCCBA", (2, 4): "ABBA", (2, 6): "ABABBA", (3, 9): "ABCABCCBA",
                     (1, 6): "AAAAAA", (6, 6): "ABCDEF", (6, 12): "ABCDEFFEDCBA",
                     (3, 7): "ABCACBA", (3, 8): "ABCABCBA", (4, 6): "ABCDDC",
                     (2, 5): "ABABA"}.items():
    HAND[M, N]["cycle-rev-code"] = code


def letters(text):
    return [ord(ch) - ord("A") for ch in text]


@pytest.mark.parametrize(
    "M, N, strategy, expected",
    [(M, N, s, e) for (M, N), by in HAND.items() for s, e in by.items()],
)
def test_assign_matches_hand_derived_cases(M, N, strategy, expected):
    assert assign(strategy, N, M) == letters(expected)


def test_worked_example_from_the_paper():
    assert assign("sequence", 6, 3) == [0, 0, 1, 1, 2, 2]
    assert assign("cycle", 6, 3) == [0, 1, 2, 0, 1, 2]
    assert assign("cycle-rev", 6, 3) == [0, 1, 2, 2, 1, 0]


@pytest.mark.parametrize("strategy", ["sequence", "cycle", "cycle-rev"])
def test_assign_matches_paper_procedure_for_all_small_sizes(strategy):
    for N in range(1, 25):
        for M in range(1, N + 1):
            expected, created = paper_assignment(strategy, N, M)
            if strategy == "sequence" and N % M:
                # the paper's blocks of floor(N/M) layers create more than M sets here
                assert created > M
                with pytest.raises(ValueError, match="divide"):
                    assign(strategy, N, M)
                continue
            assert created == M
            assert assign(strategy, N, M) == expected, (M, N)


def test_cycle_rev_shares_the_lowest_and_highest_layer():
    for M, N in [(2, 4), (3, 6), (3, 9), (6, 12), (6, 18)]:
        schedule = assign("cycle-rev", N, M)
        assert schedule[0] == schedule[-1] == 0


def test_cycle_rev_code_matches_the_authors_procedure():
    # Every M the code can be given (through s, positions per set) for N up to 24.
    for N in range(1, 25):
        for s in range(1, N + 1):
            expected, M = code_assignment(N, s)
            assert assign("cycle-rev-code", N, M) == expected, (M, N)
            assert sorted(set(expected)) == list(range(M))


def test_the_two_cycle_rev_rules_agree_exactly_when_m_divides_n():
    for N in range(1, 25):
        for M in range(1, N + 1):
            same = assign("cycle-rev", N, M) == assign("cycle-rev-code", N, M)
            # They also agree when N < 2M leaves at most one reversed round to fill: M = 4, N = 6.
            assert same == (N % M == 0 or N < 2 * M), (M, N)
    assert assign("cycle-rev", 7, 3) == letters("ABCABCC")        # the paper's text
    assert assign("cycle-rev-code", 7, 3) == letters("ABCACBA")   # the authors' code


@pytest.mark.parametrize(
    "M, N, match",
    [(0, 6, "1 <= n_unique"), (-1, 6, "1 <= n_unique"), (7, 6, "1 <= n_unique"),
     (1, 0, "at least 1")],
)
def test_assign_rejects_sizes_outside_the_paper(M, N, match):
    for strategy in ("sequence", "cycle", "cycle-rev", "cycle-rev-code"):
        with pytest.raises(ValueError, match=match):
            assign(strategy, N, M)


@pytest.mark.parametrize("M, N", [(3, 7), (4, 6), (2, 5), (5, 12)])
def test_sequence_needs_m_to_divide_n(M, N):
    with pytest.raises(ValueError, match=r"sequence needs n_unique to divide n_layers.*Sec\. 2"):
        assign("sequence", N, M)


@pytest.mark.parametrize("bad", [6.0, "6", None, True])
def test_assign_rejects_non_int_sizes(bad):
    with pytest.raises(TypeError, match="n_layers must be an int"):
        assign("cycle", bad, 3)
    with pytest.raises(TypeError, match="n_unique must be an int"):
        assign("cycle", 6, bad)


def test_assign_rejects_unknown_strategy_and_lists_known():
    with pytest.raises(ValueError, match="sequence, cycle, cycle-rev"):
        assign("cycle_rev", 6, 3)


# ALBERT (Lan et al., 2019), Sec. 3.1, Table 4: (attention sets, FFN sets) for N layers.
@pytest.mark.parametrize(
    "name, attention_sets, ffn_sets",
    [("not-shared", "N", "N"), ("all-shared", 1, 1), ("shared-attention", 1, "N"),
     ("shared-ffn", "N", 1)],
)
def test_albert_variants(name, attention_sets, ffn_sets):
    N = 12
    plan = Plan.build(name, n_layers=N)
    expected_attention = N if attention_sets == "N" else 1
    expected_ffn = N if ffn_sets == "N" else 1
    assert plan.n_sets("attention") == expected_attention
    assert plan.n_sets("cross_attention") == expected_attention  # goes with attention
    assert plan.n_sets("ffn") == expected_ffn
    assert plan.name == name
    assert plan.n_layers == N
    for i in range(N):
        assert plan.index("attention", i) == (i if expected_attention == N else 0)
        assert plan.index("ffn", i) == (i if expected_ffn == N else 0)


def test_universal_is_one_layer_at_every_depth():
    plan = Plan.build("universal", n_layers=6)
    assert all(plan.schedule(c) == (0,) * 6 for c in COMPONENTS)
    assert plan == Plan.build("all-shared", n_layers=6)
    assert plan.name == "universal"


def test_vanilla_and_universal_are_the_extremes_of_every_strategy():
    for strategy in ("sequence", "cycle", "cycle-rev", "cycle-rev-code"):
        assert Plan.build(strategy, 6, n_unique=6) == Plan.build("not-shared", 6)
        assert Plan.build(strategy, 6, n_unique=1) == Plan.build("universal", 6)


def test_takase_kiyono_plans_share_every_component():
    plan = Plan.build(sharing="cycle-rev", n_layers=6, n_unique=3)
    for c in COMPONENTS:
        assert plan.schedule(c) == (0, 1, 2, 2, 1, 0)
        assert plan.n_sets(c) == 3
    assert plan.positions_of("ffn", 0) == [0, 5]
    assert plan.positions_of("attention", 2) == [2, 3]


@pytest.mark.parametrize(
    "name, n_unique, match",
    [
        ("not-shared", 3, "not-shared has n_unique=6"),
        ("all-shared", 2, "all-shared has n_unique=1"),
        ("universal", 6, "universal has n_unique=1"),
        ("shared-attention", 1, "no single n_unique"),
        ("shared-ffn", 6, "no single n_unique"),
    ],
)
def test_named_plans_reject_inconsistent_n_unique(name, n_unique, match):
    with pytest.raises(ValueError, match=match):
        Plan.build(name, n_layers=6, n_unique=n_unique)


def test_consistent_n_unique_is_accepted():
    assert Plan.build("not-shared", 6, n_unique=6) == Plan.build("not-shared", 6)
    assert Plan.build("all-shared", 6, n_unique=1) == Plan.build("all-shared", 6)


def test_takase_kiyono_plans_need_n_unique():
    with pytest.raises(ValueError, match="needs n_unique"):
        Plan.build("cycle", n_layers=6)


def test_named_plans_need_n_layers():
    with pytest.raises(ValueError, match="needs n_layers"):
        Plan.build("all-shared")


def test_unknown_strategy_lists_known_names():
    with pytest.raises(ValueError, match="unknown sharing strategy 'albert'") as info:
        Plan.build("albert", n_layers=6)
    for name in ("sequence", "cycle", "cycle-rev", "cycle-rev-code", "not-shared", "all-shared",
                 "shared-attention", "shared-ffn", "universal"):
        assert name in str(info.value)


def test_explicit_list_applies_to_every_component():
    plan = Plan.build([0, 1, 1, 0, 2])
    assert plan.name == "custom"
    assert plan.n_layers == 5
    for c in COMPONENTS:
        assert plan.schedule(c) == (0, 1, 1, 0, 2)
        assert plan.n_sets(c) == 3
    assert plan.positions_of("attention", 1) == [1, 2]
    assert Plan.build([0, 1, 1, 0, 2], n_layers=5, n_unique=3) == plan


def test_explicit_dict_per_component():
    plan = Plan.build({"attention": [0, 0, 0, 0], "ffn": [0, 1, 2, 3]}, n_layers=4)
    assert plan.schedule("attention") == (0, 0, 0, 0)
    assert plan.schedule("cross_attention") == (0, 0, 0, 0)  # follows attention
    assert plan.schedule("ffn") == (0, 1, 2, 3)
    assert plan == Plan.build("shared-attention", n_layers=4)


def test_explicit_dict_with_its_own_cross_attention():
    plan = Plan.build({"attention": [0, 1], "cross_attention": [0, 0], "ffn": [1, 0]})
    assert plan.schedule("cross_attention") == (0, 0)
    assert plan.index("ffn", 0) == 1


@pytest.mark.parametrize(
    "schedule, error, match",
    [
        ([], ValueError, "empty"),
        ([0, 1.0], TypeError, r"\[1\] must be an int"),
        ([0, True], TypeError, r"\[1\] must be an int"),
        ([0, "1"], TypeError, r"\[1\] must be an int"),
        ([0, -1], ValueError, "start at 0"),
        ([0, 2, 2], ValueError, r"never uses set\(s\) \[1\]"),
        ([1, 1], ValueError, r"never uses set\(s\) \[0\]"),
        ({"attention": [0, 0]}, ValueError, "missing ffn"),
        ({"ffn": [0, 0]}, ValueError, "missing attention"),
        ({"attention": [0, 0], "ffn": [0, 1, 2]}, ValueError, "one entry per layer position"),
        ({"attention": [0], "ffn": [0], "mlp": [0]}, ValueError, "unknown component"),
        (3, TypeError, "sharing must be"),
    ],
)
def test_explicit_schedule_errors(schedule, error, match):
    with pytest.raises(error, match=match):
        Plan.build(schedule)


def test_explicit_schedule_length_must_match_n_layers():
    with pytest.raises(ValueError, match="has 3 positions but n_layers=4"):
        Plan.build([0, 1, 2], n_layers=4)


def test_explicit_schedule_n_unique_must_match():
    with pytest.raises(ValueError, match="n_unique=2 disagrees"):
        Plan.build([0, 1, 2], n_unique=2)


def test_index_and_positions_of_validate_their_arguments():
    plan = Plan.build("cycle", 4, 2)
    with pytest.raises(ValueError, match="unknown component 'mlp'"):
        plan.index("mlp", 0)
    with pytest.raises(IndexError, match="outside 0..3"):
        plan.index("ffn", 4)
    with pytest.raises(IndexError, match="outside 0..3"):
        plan.index("ffn", -1)
    with pytest.raises(IndexError, match="sets 0..1"):
        plan.positions_of("ffn", 2)


def test_plan_is_immutable():
    plan = Plan.build("cycle", 4, 2)
    with pytest.raises(AttributeError):
        plan.name = "other"
    with pytest.raises(AttributeError):
        plan.n_layers = 8
    schedule = plan.schedule("ffn")
    assert isinstance(schedule, tuple)


def test_equality_compares_the_sharing_not_the_name():
    assert Plan.build("cycle", 6, 3) == Plan.build([0, 1, 2, 0, 1, 2])
    assert Plan.build("cycle", 6, 3) != Plan.build("cycle-rev", 6, 3)
    assert hash(Plan.build("cycle", 6, 3)) == hash(Plan.build([0, 1, 2, 0, 1, 2]))
    assert Plan.build("cycle", 6, 3) != [0, 1, 2, 0, 1, 2]


def test_str_single_line_when_components_agree():
    assert str(Plan.build("cycle-rev", 6, 3)) == "A B C C B A"
    assert str(Plan.build("sequence", 6, 3)) == "A A B B C C"
    assert str(Plan.build("universal", 3)) == "A A A"


def test_str_one_line_per_component_when_they_differ():
    assert str(Plan.build("shared-attention", 4)) == "attention: A A A A\nffn:       A B C D"
    assert str(Plan.build("shared-ffn", 3)) == "attention: A B C\nffn:       A A A"
    plan = Plan.build({"attention": [0, 0], "cross_attention": [0, 1], "ffn": [0, 0]})
    assert str(plan) == "attention:       A A\ncross_attention: A B\nffn:             A A"


def test_str_beyond_26_sets():
    assert str(Plan.build("not-shared", 28)) == (
        "A  B  C  D  E  F  G  H  I  J  K  L  M  N  O  P  Q  R  S  T  U  V  W  X  Y  Z  A1 B1"
    )


def test_repr_round_trips():
    plan = Plan.build("shared-ffn", 3)
    assert repr(plan) == (
        "Plan({'attention': (0, 1, 2), 'cross_attention': (0, 1, 2), 'ffn': (0, 0, 0)}, "
        "name='shared-ffn')"
    )
    assert eval(repr(plan), {"Plan": Plan}) == plan
    assert eval(repr(plan), {"Plan": Plan}).name == "shared-ffn"


def test_plan_constructor_needs_every_component():
    with pytest.raises(ValueError, match="one schedule for each"):
        Plan({"attention": [0], "ffn": [0]})


def test_module_names():
    assert sharing.COMPONENTS == ("attention", "cross_attention", "ffn")


def test_the_rules_table_names_functions_that_assign_looks_up_when_called(monkeypatch):
    """The table holds names, no rule a submission to ex05 could call past the grader's tripwire,
    and assign runs whatever the module holds under that name when it is called (the tripwire)."""
    assert all(callable(getattr(sharing, name)) for name in sharing.TAKASE_KIYONO_RULES.values())
    assert not any(callable(rule) for rule in sharing.TAKASE_KIYONO_RULES.values())
    seen, rule = [], sharing.cycle
    monkeypatch.setattr(sharing, "cycle", lambda N, M: seen.append((N, M)) or rule(N, M))
    assert assign("cycle", 5, 2) == [0, 1, 0, 1, 0] and seen == [(5, 2)]


def _filled_cells(ax):
    return [p for p in ax.patches if p.get_facecolor()[3] > 0]


def test_draw_cycle_rev():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.axes
    import matplotlib.pyplot as plt

    from minishare.analysis.plan_figure import draw_plan

    plan = Plan.build("cycle-rev", 6, 3)
    ax = draw_plan(plan)
    assert isinstance(ax, matplotlib.axes.Axes)
    cells = _filled_cells(ax)
    assert len(cells) == 6  # one per position
    # cell centres (set, position): position 0 at the bottom uses A, position 5 at the top uses A
    centres = sorted((round(c.get_x() + c.get_width() / 2), round(c.get_y() + c.get_height() / 2))
                     for c in cells)
    assert centres == sorted((k, i) for i, k in enumerate([0, 1, 2, 2, 1, 0]))
    assert "cycle-rev" in ax.get_title()
    assert ax.get_xlabel() and ax.get_ylabel()
    plt.close("all")


def test_cycle_rev_code_in_configs_and_drawings():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from minishare.analysis.plan_figure import draw_plan
    from minishare.models import AlbertConfig, TransformerConfig

    code = [0, 1, 2, 0, 2, 1, 0]   # A B C A C B A
    albert = AlbertConfig(vocab_size=20, embedding_size=4, hidden_size=8, num_hidden_layers=7,
                          num_attention_heads=2, intermediate_size=16, sharing="cycle-rev-code",
                          num_unique_layers=3)
    assert list(albert.plan().schedule("ffn")) == code
    seq2seq = TransformerConfig(vocab_size=20, hidden_size=8, num_attention_heads=2,
                                intermediate_size=16, num_hidden_layers=7,
                                sharing="cycle-rev-code", num_unique_layers=3)
    assert list(seq2seq.plan().schedule("attention")) == code
    ax = draw_plan(Plan.build("cycle-rev-code", 7, 3))
    centres = sorted((round(c.get_x() + c.get_width() / 2), round(c.get_y() + c.get_height() / 2))
                     for c in _filled_cells(ax))
    assert centres == sorted((k, i) for i, k in enumerate(code))
    assert "cycle-rev-code" in ax.get_title()
    plt.close("all")


def test_draw_components_side_by_side_and_on_a_given_axes():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from minishare.analysis.plan_figure import draw_plan

    plan = Plan.build("shared-attention", 4)
    _, ax = plt.subplots()
    assert draw_plan(plan, ax=ax) is ax
    assert len(_filled_cells(ax)) == 8  # attention and ffn, 4 positions each
    assert len(ax.get_xticks()) == 1 + 4  # one attention set, four FFN sets
    _, ax = plt.subplots()
    draw_plan(plan, ax=ax, component="ffn")
    assert len(_filled_cells(ax)) == 4
    assert len(ax.get_xticks()) == 4
    assert "ffn" in ax.get_title()
    with pytest.raises(ValueError, match="unknown component"):
        draw_plan(plan, component="mlp")
    plt.close("all")
