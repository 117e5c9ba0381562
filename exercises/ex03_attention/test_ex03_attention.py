"""Tests of exercise 3 against an attention written here with NumPy loops over heads and queries,
hand-worked cases, invariances (no future, no padding leaks in) and finite differences."""
import math

import numpy as np
import pytest

import minishare
from attention import MultiHeadAttention, causal_and_padding_mask, scaled_dot_product_attention


def t(a, grad=False):
    return minishare.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def reference_attention(q, k, v, mask):
    """One query at a time, with plain exp and a sum over allowed keys."""
    out = np.zeros(q.shape[:-1] + v.shape[-1:])
    for index in np.ndindex(*q.shape[:-1]):
        *lead, i = index
        allowed = np.broadcast_to(mask, q.shape[:-1] + k.shape[-2:-1])[index]
        if not allowed.any():
            continue
        scores = np.array([q[index] @ k[tuple(lead) + (j,)] / math.sqrt(q.shape[-1]) for j in range(k.shape[-2])])
        weights = np.where(allowed, np.exp(scores - scores[allowed].max()), 0.0)
        out[index] = (weights / weights.sum()) @ v[tuple(lead)]
    return out


@pytest.mark.ex03_task1
def test_zero_queries_average_the_values():
    """q = 0: every score is 0, so the output is the mean of the allowed values."""
    v = np.arange(6.0).reshape(1, 3, 2)
    mask = np.array([[True, True, False]])
    out, probs = scaled_dot_product_attention(t(np.zeros((1, 1, 4))), t(np.ones((1, 3, 4))), t(v), mask)
    np.testing.assert_allclose(out.numpy(), [[[1.0, 2.0]]])
    np.testing.assert_allclose(probs.numpy(), [[[0.5, 0.5, 0.0]]])


@pytest.mark.ex03_task1
def test_attention_matches_a_loop_reference_with_a_mask():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 5, 3))
    mask = rng.random((2, 3, 5)) < 0.6
    mask[:, :, 0] = True
    out, probs = scaled_dot_product_attention(t(q), t(k), t(v), mask)
    np.testing.assert_allclose(out.numpy(), reference_attention(q, k, v, mask), rtol=1e-10)
    assert (probs.numpy()[~mask] == 0).all()


@pytest.mark.ex03_task2
def test_mask_hand_worked():
    mask = causal_and_padding_mask(np.array([[1, 1, 0]]))
    assert mask.shape == (1, 1, 3, 3) and mask.dtype == bool
    np.testing.assert_array_equal(mask[0, 0], [[1, 0, 0], [1, 1, 0], [1, 1, 0]])


@pytest.mark.ex03_task3
def test_multi_head_matches_reference_per_head():
    minishare.manual_seed(0)
    mha = MultiHeadAttention(8, 2).double()
    x = np.random.default_rng(1).standard_normal((2, 4, 8))
    mask = causal_and_padding_mask(np.array([[1, 1, 1, 1], [1, 1, 0, 0]]))
    out = mha(t(x), mask).numpy()

    def proj(layer, a):
        return a @ layer.weight.numpy().T + layer.bias.numpy()

    heads = lambda a: a.reshape(2, 4, 2, 4).transpose(0, 2, 1, 3)
    ref = reference_attention(heads(proj(mha.query, x)), heads(proj(mha.key, x)),
                              heads(proj(mha.value, x)), mask)
    ref = proj(mha.dense, ref.transpose(0, 2, 1, 3).reshape(2, 4, 8))
    np.testing.assert_allclose(out[0], ref[0], rtol=1e-9)
    np.testing.assert_allclose(out[1, :2], ref[1, :2], rtol=1e-9)   # padded queries: any value


### BEGIN HIDDEN TESTS
@pytest.mark.ex03_task1
def test_a_query_that_may_attend_nowhere_gives_zeros_not_nan():
    out, probs = scaled_dot_product_attention(t(np.ones((2, 3))), t(np.ones((2, 3))), t(np.ones((2, 3))),
                                              np.array([[False, False], [True, False]]))
    assert np.isfinite(out.numpy()).all()
    np.testing.assert_allclose(out.numpy()[0], 0)


@pytest.mark.ex03_task1
def test_attention_gradcheck():
    rng = np.random.default_rng(2)
    q, k, v = (t(rng.standard_normal(s), grad=True) for s in ((2, 3), (4, 3), (4, 2)))
    mask = np.array([[True, True, False, True], [True, False, False, False]])
    assert minishare.gradcheck(lambda q, k, v: scaled_dot_product_attention(q, k, v, mask)[0], q, k, v)


@pytest.mark.ex03_task2
def test_mask_of_a_batch_differs_per_example():
    mask = causal_and_padding_mask(np.array([[1, 1], [1, 0]]))
    np.testing.assert_array_equal(mask[:, 0], [[[1, 0], [1, 1]], [[1, 0], [1, 0]]])


@pytest.mark.ex03_task3
def test_no_future_and_no_padding_leaks_in():
    """Changing a future token, or a padding token, leaves the earlier real positions' outputs."""
    minishare.manual_seed(3)
    mha = MultiHeadAttention(6, 3).double()
    x = np.random.default_rng(4).standard_normal((1, 5, 6))
    mask = causal_and_padding_mask(np.array([[1, 1, 1, 1, 0]]))
    before = mha(t(x), mask).numpy()
    x2 = x.copy()
    x2[0, 3:] += 10.0
    after = mha(t(x2), mask).numpy()
    np.testing.assert_allclose(after[0, :3], before[0, :3], rtol=1e-12)
    assert not np.allclose(after[0, 3], before[0, 3])


@pytest.mark.ex03_task3
def test_cross_attention_gradcheck_and_parameter_count():
    minishare.manual_seed(5)
    mha = MultiHeadAttention(4, 2).double()
    assert minishare.count_parameters(mha) == 4 * (4 * 4 + 4)
    x, context = t(np.random.default_rng(6).standard_normal((1, 2, 4)), True), \
        t(np.random.default_rng(7).standard_normal((1, 3, 4)), True)
    assert minishare.gradcheck(lambda x, c: mha(x, context=c), x, context)
### END HIDDEN TESTS
