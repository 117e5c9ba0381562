"""The competition's reference entries (``experiments.exp_golf``): their bytes by hand, the budget
they justify, and one trained model scored at both precisions.

The not-shared entry, V = 256, H = 48, F = 96, two layers, tied, Pre-LN: a layer holds
4·48² + 4·48 + 2·48 = 9,504 values for attention and its norm and 2·48·96 + 96 + 48 + 2·48 = 9,456
for the FFN and its norm, in 198 + 148 = 346 rows; the embedding 256·48 = 12,288 values in 256
rows; the final norm 96 in 2: 50,304 values in 950 rows.
"""
import pytest

from minishare.experiments import exp_golf
from minishare.golf import budget
from minishare.golf.run import BUDGET_BYTES

NOT_SHARED_VALUES, NOT_SHARED_ROWS = 2 * (9504 + 9456) + 12288 + 96, 2 * 346 + 256 + 2


def test_the_not_shared_reference_entry_by_hand():
    assert budget.entry_bytes(exp_golf.entry("not-shared", 10, 0), 256) == 4 * NOT_SHARED_VALUES == 201216
    assert (budget.entry_bytes(exp_golf.entry("not-shared", 10, 0, "int8"), 256)
            == NOT_SHARED_VALUES + 4 * NOT_SHARED_ROWS == 54104)


@pytest.mark.parametrize("design", list(exp_golf.DESIGNS))
def test_every_reference_entry_fits_the_budget_at_int8_and_not_at_float32(design):
    # the budget is set so that each design fits at int8 with room to spare, its float32 copy does not
    assert 0.7 * BUDGET_BYTES < budget.entry_bytes(exp_golf.entry(design, 10, 0, "int8"), 256) <= BUDGET_BYTES
    assert budget.entry_bytes(exp_golf.entry(design, 10, 0, "float32"), 256) > 2 * BUDGET_BYTES


def test_one_training_is_scored_at_both_precisions():
    rows = exp_golf.measure("looped", 2, 0)
    assert rows["float32"]["train_cpu_seconds"] == rows["int8"]["train_cpu_seconds"]
    assert rows["int8"]["bytes"] < rows["float32"]["bytes"] and rows["int8"]["steps_done"] == 2
    # the int8 copy is a different stored model: its score moves, however little
    assert rows["int8"]["bits_per_byte"] != rows["float32"]["bits_per_byte"]


def test_the_int8_gap_is_paired_by_seed():
    result = {"rows": {"d": {"float32": [{"bits_per_byte": 1.0}, {"bits_per_byte": 2.0}],
                             "int8": [{"bits_per_byte": 1.5}, {"bits_per_byte": 2.25}]}}}
    assert exp_golf.gap(result, "d") == [0.5, 0.25]
