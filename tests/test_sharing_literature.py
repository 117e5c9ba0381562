"""The later plans of minishare.sharing against schedules written out by hand from the papers:
MobileLLM's immediate block-wise sharing (Liu et al., 2024), Middle-Cycle (Bae et al., 2025) and
Subformer's sandwich (Reid et al., 2021)."""
import pytest

from minishare.analysis import count_parameters
from minishare.errors import InvalidValue
from minishare.models import TransformerConfig
from minishare.models.seq2seq import DecoderLM
from minishare.nn import init
from minishare.sharing import COMPONENTS, STRATEGIES, Plan

A, B, C, D, E = range(5)
HAND = {
    ("immediate-block-wise", 2, None): [A, A],
    ("immediate-block-wise", 6, None): [A, A, B, B, C, C],
    ("immediate-block-wise", 8, 4): [A, A, B, B, C, C, D, D],
    ("middle-cycle", 6, 4): [A, B, C, B, C, D],
    ("middle-cycle", 7, 4): [A, B, C, B, C, B, D],
    ("middle-cycle", 8, 5): [A, B, C, D, B, C, D, E],
    ("middle-cycle", 5, 3): [A, B, B, B, C],
    ("middle-cycle", 4, 4): [A, B, C, D],
    ("sandwich", 3, None): [A, B, C],
    ("sandwich", 6, None): [A, B, B, B, B, C],
    ("sandwich", 6, 3): [A, B, B, B, B, C],
}


@pytest.mark.parametrize("strategy, N, M", HAND)
def test_schedules_against_hand_written_lists(strategy, N, M):
    plan = Plan.build(strategy, N, M)
    assert strategy in STRATEGIES and plan.name == strategy
    for component in COMPONENTS:
        assert list(plan.schedule(component)) == HAND[strategy, N, M]


def test_the_named_plans_are_the_ones_they_resemble():
    assert Plan.build("immediate-block-wise", 6) == Plan.build("sequence", 6, 3)
    assert Plan.build("middle-cycle", 6, 3) == Plan.build("sandwich", 6)
    assert Plan.build("middle-cycle", 5, 5) == Plan.build("not-shared", 5)


@pytest.mark.parametrize("strategy, N, M, match", [
    ("immediate-block-wise", 5, None, "even"),
    ("immediate-block-wise", 6, 2, "n_unique=3"),
    ("sandwich", 2, None, ">= 3"),
    ("sandwich", 6, 4, "n_unique=3"),
    ("middle-cycle", 6, None, "needs n_unique"),
    ("middle-cycle", 6, 2, "3 <= n_unique"),
    ("middle-cycle", 4, 5, "3 <= n_unique"),
])
def test_plans_the_rules_do_not_define_are_refused(strategy, N, M, match):
    with pytest.raises(InvalidValue, match=match):
        Plan.build(strategy, N, M)


def test_counted_like_the_others():
    """A sandwich of 6 layers stores 3; block-wise sharing of 6 stores 3; the counts of a model
    built on each plan say so (one layer: 4 (H² + H) + (H·I + I) + (I·H + H) + 2 · 2H)."""
    H, I = 8, 32
    layer = 4 * (H * H + H) + (H * I + I) + (I * H + H) + 4 * H

    def count(sharing, M=None):
        with init.shape_only():
            return count_parameters(DecoderLM(TransformerConfig(
                vocab_size=10, hidden_size=H, num_attention_heads=2, intermediate_size=I, num_hidden_layers=6,
                sharing=sharing, num_unique_layers=M, norm_position="post")))
    assert count("not-shared") - count("sandwich") == 3 * layer
    assert count("not-shared") - count("immediate-block-wise") == 3 * layer
    assert count("not-shared") - count("middle-cycle", 4) == 2 * layer


def test_drawn_like_the_others():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from minishare.analysis.plan_figure import draw_plan
    ax = draw_plan(Plan.build("middle-cycle", 6, 4))
    assert [t.get_text() for t in ax.get_xticklabels()] == ["A", "B", "C", "D"]
    assert len(ax.patches) == 6
    assert str(Plan.build("sandwich", 5)) == "A B B B C"
