"""The small pure helpers of the analysis experiments (gradient norms, FLOPs, memory)."""
from minishare.experiments.exp_gradnorms import _direction, top_bottom


def test_top_bottom_leaves_out_the_first_position():
    assert top_bottom([9.0, 1, 1, 2, 2, 4, 4]) == 4.0            # (4 + 4) / 2 over (1 + 1) / 2
    assert top_bottom([0.1, 4.0, 2.0, 1.0]) == 0.25              # one position per third
    assert _direction([1.2, 1.5]) == "larger near the output"
    assert _direction([0.5, 0.9]) == "smaller near the output"
    assert _direction([0.97, 1.01]).startswith("level")             # within 5% of 1
    assert _direction([1.01, 1.2]).startswith("of no clear direction")
