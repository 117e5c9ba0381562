"""Tests of exercise 7: identity of the shared tensor, hand counts (V × E saved), finite
differences, and the gradient of the tied table as the sum of its two uses."""
import numpy as np
import pytest

import minishare
from minishare.models import AlbertConfig, AlbertForPreTraining
from minishare.nn import Embedding
from minishare.optim import SGD
from tying import TiedHead, tie, tying_status


def config(**fields):
    return AlbertConfig(**{**dict(vocab_size=30, embedding_size=4, hidden_size=8, num_hidden_layers=2,
                                  num_attention_heads=2, intermediate_size=16, max_position_embeddings=16),
                           **fields})


@pytest.mark.ex07_task1
def test_head_uses_the_table_itself_and_counts():
    table = Embedding(30, 4)
    head = TiedHead(table, 8)
    assert head.weight is table.weight
    own = minishare.count_parameters(head)
    assert own == 30 * 4 + (8 * 4 + 4) + 2 * 4 + 30       # the table, dense, LayerNorm, bias
    h = minishare.tensor(np.random.default_rng(0).standard_normal((2, 3, 8)).astype(np.float32))
    assert head(h).shape == (2, 3, 30)


@pytest.mark.ex07_task1
def test_tied_table_gradient_is_the_sum_of_both_uses():
    """The table is used twice: looked up at the input and scored against at the output. Untie it
    into two tables with the same values: their gradients add up to the tied one."""
    minishare.manual_seed(0)
    table = Embedding(7, 3).double()
    head = TiedHead(table, 3).double()
    ids = np.array([[1, 2, 2]])
    v = np.random.default_rng(1).standard_normal((1, 3, 7))
    head(table(ids)).backward(v)
    tied = table.weight.grad.copy()

    copy = Embedding(7, 3).double()
    copy.weight.data = table.weight.data.copy()
    for p in head.parameters():
        p.grad = None
    table.weight.grad = None
    head(copy(ids)).backward(v)
    np.testing.assert_allclose(tied, table.weight.grad + copy.weight.grad, rtol=1e-10)


@pytest.mark.ex07_task2
def test_tie_saves_v_times_e_and_moves_together():
    minishare.manual_seed(1)
    model = AlbertForPreTraining(config(tie_word_embeddings=False))
    assert tie(model) == 30 * 4
    assert model.predictions.decoder.weight is model.albert.embeddings.word_embeddings.weight


@pytest.mark.ex07_task3
def test_status_of_three_models():
    minishare.manual_seed(2)
    assert tying_status(AlbertForPreTraining(config())) == "tied"
    assert tying_status(AlbertForPreTraining(config(tie_word_embeddings=False))) == "untied"


### BEGIN HIDDEN TESTS
@pytest.mark.ex07_task1
def test_head_gradcheck_through_the_shared_table():
    minishare.manual_seed(3)
    table = Embedding(5, 2).double()
    head = TiedHead(table, 4).double()
    h = minishare.tensor(np.random.default_rng(4).standard_normal((1, 2, 4)), requires_grad=True)

    def f(h, w):
        return head(h)

    assert minishare.gradcheck(f, h, head.weight)


@pytest.mark.ex07_task2
def test_after_tie_a_training_step_keeps_one_table():
    minishare.manual_seed(5)
    model = AlbertForPreTraining(config(tie_word_embeddings=False))
    tie(model)
    table = model.albert.embeddings.word_embeddings.weight
    before = table.numpy().copy()
    model(np.array([[2, 5, 7, 1]]), labels=np.array([[-100, 5, -100, 1]])).loss.backward()
    optimizer = SGD(model.parameters(), lr=0.1)
    assert sum(p.size for p in optimizer.param_groups[0]["params"]) == minishare.count_parameters(model)
    optimizer.step()
    assert model.predictions.decoder.weight is table
    np.testing.assert_allclose(table.numpy(), before - 0.1 * table.grad, rtol=1e-5, atol=1e-7)


@pytest.mark.ex07_task3
def test_a_copy_is_detected_and_drifts():
    minishare.manual_seed(6)
    model = AlbertForPreTraining(config(tie_word_embeddings=False))
    model.predictions.decoder.weight = minishare.nn.Parameter(
        model.albert.embeddings.word_embeddings.weight.data.copy())
    assert tying_status(model) == "copied"
    model.predictions.decoder.weight.data = model.predictions.decoder.weight.data + 1.0
    assert tying_status(model) == "untied"
### END HIDDEN TESTS
