"""Tests of exercise 4 against the paper's numbers, hand counts and counting the module's
tensors (minishare.count_parameters walks the parameters; it knows nothing of the formula)."""
import numpy as np
import pytest

import minishare
from embedding import FactorizedEmbedding, break_even_embedding_size, embedding_parameters


@pytest.mark.ex04_task1
def test_counts_of_the_paper():
    """Sec. 3.1: V = 30,000 and H = 4096 (xxlarge): 123M for V×H, about 4.4M with E = 128."""
    assert embedding_parameters(30000, 4096, 4096) == 122_880_000
    assert embedding_parameters(30000, 128, 4096) == 30000 * 128 + 128 * 4096 + 4096


@pytest.mark.ex04_task2
def test_module_counts_and_shapes():
    emb = FactorizedEmbedding(50, 4, 16)
    assert minishare.count_parameters(emb) == 50 * 4 + 4 * 16 + 16
    assert emb(np.array([[1, 2, 3]])).shape == (1, 3, 16)
    assert FactorizedEmbedding(50, 16, 16).projection is None


@pytest.mark.ex04_task2
def test_forward_is_lookup_then_projection():
    minishare.manual_seed(0)
    emb = FactorizedEmbedding(10, 3, 5)
    ids = np.array([[4, 4, 9]])
    W, P, b = emb.word_embeddings.weight.numpy(), emb.projection.weight.numpy(), emb.projection.bias.numpy()
    np.testing.assert_allclose(emb(ids).numpy(), W[ids] @ P.T + b, rtol=1e-5)


@pytest.mark.ex04_task3
def test_break_even_for_albert_base_width():
    """V = 30,000, H = 768: E ≤ 748 saves parameters, E = 749 does not (worked by hand)."""
    assert break_even_embedding_size(30000, 768) == 748


### BEGIN HIDDEN TESTS
@pytest.mark.ex04_task1
def test_counts_match_the_built_module_for_many_shapes():
    for V, E, H in [(7, 2, 3), (100, 8, 8), (30, 5, 40)]:
        layers = [minishare.nn.Embedding(V, E)] + ([minishare.nn.Linear(E, H)] if E != H else [])
        assert embedding_parameters(V, E, H) == sum(minishare.count_parameters(m) for m in layers)


@pytest.mark.ex04_task2
def test_gradient_reaches_only_the_rows_looked_up():
    minishare.manual_seed(1)
    emb = FactorizedEmbedding(6, 2, 4).double()
    emb(np.array([[1, 1, 3]])).sum().backward()
    grad = emb.word_embeddings.weight.grad
    assert np.abs(grad[[0, 2, 4, 5]]).sum() == 0 and np.abs(grad[1]).sum() > 0


@pytest.mark.ex04_task3
def test_break_even_is_tight_by_direct_count():
    for V, H in [(30000, 4096), (1000, 128), (50, 50), (12, 7)]:
        E = break_even_embedding_size(V, H)
        assert V * E + E * H + H < V * H
        assert V * (E + 1) + (E + 1) * H + H >= V * H
### END HIDDEN TESTS
