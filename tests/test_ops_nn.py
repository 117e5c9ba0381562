"""The network ops: matmul, linear, gelu, softmax, log_softmax, layer_norm, cross_entropy, embedding,
dropout. Gradcheck in float64; forward values against reference formulas written here in NumPy
(or hand-worked numbers); numerical stability and masking; clear errors for bad input."""
import math

import numpy as np
import pytest
from hypothesis import example, given, strategies as st
from hypothesis.extra import numpy as hnp

import minishare
import minishare.functional as F
from conftest import check, const, grad_of, host, leaf, randn

seeds = st.integers(0, 2**16)
NEG_INF = float("-inf")


# --- reference formulas (NumPy, independent of the library) --------------------------------------
def softmax_ref(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax_ref(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def layer_norm_ref(x, w, b, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def gelu_exact_ref(x):
    return np.vectorize(lambda v: v * 0.5 * (1 + math.erf(v / math.sqrt(2))))(x)


def gelu_tanh_ref(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


# --- matmul and linear --------------------------------------------------------------------------
matmul_shapes = hnp.mutually_broadcastable_shapes(signature="(n,k),(k,m)->(n,m)", max_dims=2, max_side=3)


@given(shapes=matmul_shapes, seed=seeds)
@example(shapes=hnp.BroadcastableShapes(((2, 3, 2, 4), (4, 3)), (2, 3, 2, 3)), seed=0)   # batch @ matrix
@example(shapes=hnp.BroadcastableShapes(((2, 4), (3, 4, 2)), (3, 2, 2)), seed=0)         # matrix @ batch
@example(shapes=hnp.BroadcastableShapes(((2, 1, 2, 3), (3, 3, 2)), (2, 3, 2, 2)), seed=0)  # both broadcast
def test_matmul(shapes, seed):
    sa, sb = shapes.input_shapes
    a_host, b_host = randn(*sa, seed=seed), randn(*sb, seed=seed + 1)
    out = leaf(a_host) @ leaf(b_host)
    np.testing.assert_allclose(host(out), np.matmul(a_host, b_host), rtol=1e-12, atol=1e-12)
    check(lambda a, b: a @ b, leaf(a_host), leaf(b_host))


def test_rmatmul_with_a_constant_on_the_left():
    a_host, b_host = randn(2, 3), randn(3, 2, seed=1)
    b = leaf(b_host)
    (const(a_host) @ b).sum().backward()
    np.testing.assert_allclose(grad_of(b), a_host.sum(axis=0)[:, None] * np.ones((3, 2)))


@pytest.mark.parametrize("sa, sb", [((2, 3), (4, 5)), ((3,), (3, 2)), ((2, 3), (3,)), ((2, 2, 3), (2, 2))])
def test_matmul_shape_errors_name_the_shapes(sa, sb):
    with pytest.raises(ValueError, match=rf"matmul: shapes {re_shape(sa)} and {re_shape(sb)} do not fit"):
        leaf(randn(*sa)) @ leaf(randn(*sb))


def re_shape(shape):
    return str(tuple(shape)).replace("(", r"\(").replace(")", r"\)")


@pytest.mark.parametrize("x_shape", [(4,), (3, 4), (2, 3, 4)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear(x_shape, bias):
    x_host, w_host, b_host = randn(*x_shape, seed=1), randn(5, 4, seed=2), randn(5, seed=3)
    args = [leaf(x_host), leaf(w_host)] + ([leaf(b_host)] if bias else [])
    out = F.linear(*args)
    expected = x_host @ w_host.T + (b_host if bias else 0)
    np.testing.assert_allclose(host(out), expected, rtol=1e-12)
    check(F.linear, *[leaf(host(a)) for a in args])


def test_linear_bias_none_keyword():
    x_host, w_host = randn(2, 4), randn(3, 4, seed=1)
    np.testing.assert_allclose(host(F.linear(leaf(x_host), leaf(w_host), None)), x_host @ w_host.T)


def test_linear_shape_error():
    with pytest.raises(ValueError, match=r"linear: input of shape \(2, 3\).*weight of shape \(5, 4\)"):
        F.linear(leaf(randn(2, 3)), leaf(randn(5, 4)))


# --- gelu ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("approximate, ref", [("none", gelu_exact_ref), ("tanh", gelu_tanh_ref)])
def test_gelu(approximate, ref):
    x_host = np.concatenate([np.linspace(-6, 6, 13), randn(11)]).reshape(4, 6)
    out = F.gelu(leaf(x_host), approximate=approximate)
    np.testing.assert_allclose(host(out), ref(x_host), rtol=1e-12, atol=1e-15)
    check(lambda x: F.gelu(x, approximate=approximate), leaf(x_host))


def gelu_tanh_derivative_ref(x):
    """d/dx of x (1 + tanh u)/2, u = c (x + 0.044715 x³), by the product and chain rules."""
    c = math.sqrt(2 / math.pi)
    t = np.tanh(c * (x + 0.044715 * x ** 3))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x ** 2)


@pytest.mark.parametrize("approximate, ref", [("none", gelu_exact_ref), ("tanh", gelu_tanh_ref)])
def test_gelu_of_an_array_of_many_cache_blocks(approximate, ref):
    """Large inputs run in blocks (minishare.ops.blocks): the same values as the formula, and the
    tanh one's gradient, everywhere, the last partial block too."""
    x_host = 4 * randn(3, 250, 701, seed=5)                 # 525,750 float64: several blocks and a rest
    x = leaf(x_host)
    out = F.gelu(x, approximate=approximate)
    np.testing.assert_allclose(host(out), ref(x_host), rtol=1e-12, atol=1e-15)
    if approximate == "tanh":
        out.sum().backward()
        # atol 1e-14: at the far tail the derivative is a difference of two nearly equal terms,
        # which the formula and the op round apart by a few units of 1e-15
        np.testing.assert_allclose(grad_of(x), gelu_tanh_derivative_ref(x_host), rtol=1e-12, atol=1e-14)


def test_elementwise_in_blocks_gathers_each_element_from_its_block():
    from minishare import backend
    from minishare.ops.blocks import BLOCK_BYTES, WHOLE_BLOCKS, elementwise_in_blocks
    x = np.arange(5 * ((WHOLE_BLOCKS + 2) * BLOCK_BYTES // 40 + 1), dtype=np.float64).reshape(-1, 5)  # blocks + a rest
    twice, nothing = elementwise_in_blocks(lambda v: (2 * v, None), backend.asarray(x))
    assert nothing is None
    np.testing.assert_array_equal(host(twice), 2 * x)


@pytest.mark.parametrize("workers", [2, 3])
def test_elementwise_blocks_shared_between_threads_give_the_same_numbers(workers, monkeypatch):
    """With several threads (set_num_threads) each thread computes a run of the blocks: every
    element is still its own block's, the rest block too, and equal to one thread's result."""
    from minishare import backend
    from minishare.ops import blocks
    x = backend.asarray(4 * randn(15, 50, 701, seed=6))             # 525,750 float64: many blocks and a rest
    f = lambda v: (backend.xp.tanh(v) * v, v + 1)
    alone = blocks.elementwise_in_blocks(f, x)
    monkeypatch.setattr(blocks, "elementwise_threads", lambda: workers)
    shared = blocks.elementwise_in_blocks(f, x)
    for a, b in zip(alone, shared):
        np.testing.assert_array_equal(host(a), host(b))
    np.testing.assert_allclose(host(shared[0]), np.tanh(host(x)) * host(x), rtol=1e-15)
    np.testing.assert_array_equal(host(shared[1]), host(x) + 1)


def test_the_callers_floating_point_error_state_holds_in_every_thread(monkeypatch):
    """A training step silences NumPy's warnings (it checks the loss itself): the threads that share
    the blocks must keep that state, and a caller who asks for errors must get them from any thread."""
    import warnings
    from minishare import backend
    from minishare.ops import blocks
    monkeypatch.setattr(blocks, "elementwise_threads", lambda: 2)
    x = np.full((blocks.WHOLE_BLOCKS + 2) * blocks.BLOCK_BYTES // 8, 1e200)    # x * x overflows in every block
    square = lambda v: (v * v, None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="ignore"):
            assert np.isinf(host(blocks.elementwise_in_blocks(square, backend.asarray(x))[0])).all()
        with np.errstate(over="raise"), pytest.raises(FloatingPointError):
            blocks.elementwise_in_blocks(square, backend.asarray(x))


def test_gelu_exact_hand_values():
    # GELU(1) = Φ(1) = 0.8413447460685429; GELU(-1) = -Φ(-1)
    out = host(F.gelu(leaf(np.array([1.0, -1.0, 0.0]))))
    np.testing.assert_allclose(out, [0.8413447460685429, -0.15865525393145707, 0.0], rtol=1e-12)


def test_gelu_rejects_unknown_approximation():
    with pytest.raises(ValueError, match="'sigmoid'"):
        F.gelu(leaf(randn(3)), approximate="sigmoid")


# --- softmax and log_softmax --------------------------------------------------------------------
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), seed=seeds, data=st.data())
def test_softmax_and_log_softmax(shape, seed, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x_host = 3 * randn(*shape, seed=seed)
    y = F.softmax(leaf(x_host), axis=axis)
    np.testing.assert_allclose(host(y), softmax_ref(x_host, axis), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(host(y).sum(axis=axis), 1.0, rtol=1e-12)
    np.testing.assert_allclose(host(F.log_softmax(leaf(x_host), axis=axis)), log_softmax_ref(x_host, axis),
                               rtol=1e-12, atol=1e-12)
    check(lambda x: F.softmax(x, axis=axis), leaf(x_host))
    check(lambda x: F.log_softmax(x, axis=axis), leaf(x_host))


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
def test_softmax_stable_at_large_logits(fn):
    x_host = np.array([[1e4, 0.0, -1e4], [1e4, 1e4, -1e4], [-1e4, -1e4, -1e4]])
    x = leaf(x_host)
    y = host(fn(x))
    if fn is F.softmax:
        expected = [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [1 / 3, 1 / 3, 1 / 3]]
    else:
        expected = [[0.0, -1e4, -2e4], [-math.log(2), -math.log(2), -2e4 - math.log(2)], [-math.log(3)] * 3]
    assert np.all(np.isfinite(y))
    np.testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-300)
    fn(x).backward(randn(3, 3))
    assert np.all(np.isfinite(grad_of(x)))
    check(fn, leaf(x_host))


def test_softmax_stable_in_float32():
    y = host(F.softmax(minishare.tensor(np.array([[1e4, -1e4, 0.0]], dtype=np.float32))))
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, [[1.0, 0.0, 0.0]])


MASK = np.array([[False, True, False, True],
                 [True, True, True, True],      # fully masked row
                 [False, False, False, True]])


def test_masked_positions_get_exactly_zero_probability():
    x_host = randn(3, 4, seed=16)
    x = leaf(x_host)
    y = F.softmax(F.masked_fill(x, MASK, NEG_INF))
    p = host(y)
    assert np.all(p[MASK] == 0.0)                               # exactly 0, fully masked row too
    for r in (0, 2):
        np.testing.assert_allclose(p[r][~MASK[r]], softmax_ref(x_host[r][~MASK[r]]), rtol=1e-12)
    y.backward(randn(3, 4, seed=17))
    g = grad_of(x)
    assert np.all(np.isfinite(g))
    assert np.all(g[MASK] == 0.0) and np.all(g[1] == 0.0)      # no gradient through masked places
    check(lambda t: F.softmax(F.masked_fill(t, MASK, NEG_INF)), leaf(x_host))


def test_fully_masked_row_directly():
    x = leaf(np.array([[NEG_INF, NEG_INF, NEG_INF], [0.0, 1.0, NEG_INF]]))
    y = F.softmax(x)
    np.testing.assert_array_equal(host(y)[0], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(host(y)[1], [1 / (1 + math.e), math.e / (1 + math.e), 0.0], rtol=1e-12)
    y.backward(randn(2, 3))
    np.testing.assert_array_equal(grad_of(x)[0], [0.0, 0.0, 0.0])
    assert grad_of(x)[1, 2] == 0.0 and np.all(np.isfinite(grad_of(x)))


def test_log_softmax_with_masks():
    x_host = randn(3, 4, seed=18)
    x = leaf(x_host)
    y = F.log_softmax(F.masked_fill(x, MASK, NEG_INF))
    out = host(y)
    assert np.all(np.isneginf(out[MASK]))                      # log 0, fully masked row too
    np.testing.assert_allclose(out[0][~MASK[0]], log_softmax_ref(x_host[0][~MASK[0]]), rtol=1e-12)
    y.backward(randn(3, 4, seed=19))
    g = grad_of(x)
    assert np.all(np.isfinite(g)) and np.all(g[MASK] == 0.0) and np.all(g[1] == 0.0)

    def masked_log_softmax(t):   # -inf outputs zeroed so finite differences are defined
        return F.masked_fill(F.log_softmax(F.masked_fill(t, MASK, NEG_INF)), MASK, 0.0)
    check(masked_log_softmax, leaf(x_host))


def test_log_softmax_gradient_ignores_upstream_at_masked_places():
    """The -inf outputs are constants: whatever gradient arrives there must not leak into the
    other positions (dL/dx_i = g_i - p_i Σ_{j unmasked} g_j) nor back to the masked inputs."""
    x = leaf(np.array([[0.0, 1.0, NEG_INF], [NEG_INF, NEG_INF, NEG_INF]]))
    g = randn(2, 3, seed=27)
    F.log_softmax(x).backward(g)
    p = softmax_ref(np.array([0.0, 1.0]))
    expected = np.zeros((2, 3))
    expected[0, :2] = g[0, :2] - p * g[0, :2].sum()
    np.testing.assert_allclose(grad_of(x), expected, rtol=1e-12, atol=1e-15)


# --- layer_norm ---------------------------------------------------------------------------------
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), seed=seeds)
@example(shape=(5,), seed=0)
@example(shape=(2, 3, 4), seed=0)
def test_layer_norm(shape, seed):
    H = shape[-1]
    x_host = 2 + 3 * randn(*shape, seed=seed)
    w_host, b_host = randn(H, seed=seed + 1), randn(H, seed=seed + 2)
    out = F.layer_norm(leaf(x_host), leaf(w_host), leaf(b_host))
    np.testing.assert_allclose(host(out), layer_norm_ref(x_host, w_host, b_host), rtol=1e-10, atol=1e-12)
    check(F.layer_norm, leaf(x_host), leaf(w_host), leaf(b_host))


def test_layer_norm_defaults_normalize():
    x_host = 5 + 10 * randn(4, 8)
    y = host(F.layer_norm(leaf(x_host), eps=0.0))
    np.testing.assert_allclose(y.mean(axis=-1), 0.0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=-1), 1.0, rtol=1e-12)
    check(lambda x: F.layer_norm(x, eps=1e-3), leaf(x_host))


def test_layer_norm_shape_error():
    with pytest.raises(ValueError, match=r"layer_norm: weight \(3,\).*\(2, 4\)"):
        F.layer_norm(leaf(randn(2, 4)), leaf(randn(3)), leaf(randn(3)))


# --- cross_entropy ------------------------------------------------------------------------------
TARGET = np.array([2, -100, 0, 3, -100, 1])


def ce_ref(logits, target, ignore_index=-100, reduction="mean"):
    """-log p[target] per row, 0 for ignored rows; mean over the rows that count (0 if none)."""
    valid = target != ignore_index
    logp = log_softmax_ref(logits)
    losses = np.array([-logp[n, t] if v else 0.0 for n, (t, v) in enumerate(zip(target, valid))])
    if reduction == "none":
        return losses
    return losses.sum() / max(valid.sum(), 1) if reduction == "mean" else losses.sum()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy(reduction):
    z_host = 2 * randn(6, 4, seed=20)
    z = leaf(z_host)
    loss = F.cross_entropy(z, const(TARGET), reduction=reduction)
    np.testing.assert_allclose(host(loss), ce_ref(z_host, TARGET, reduction=reduction), rtol=1e-12)
    check(lambda t: F.cross_entropy(t, const(TARGET), reduction=reduction), leaf(z_host))


def test_cross_entropy_gradient_by_hand_and_ignored_rows():
    """dL/dz_n = (softmax(z_n) - onehot(t_n)) / (number of counted rows); ignored rows get 0."""
    z_host = randn(6, 4, seed=21)
    z = leaf(z_host)
    F.cross_entropy(z, const(TARGET)).backward()
    valid = TARGET != -100
    expected = softmax_ref(z_host)
    expected[np.arange(6)[valid], TARGET[valid]] -= 1
    expected[~valid] = 0.0
    np.testing.assert_allclose(grad_of(z), expected / valid.sum(), rtol=1e-12, atol=1e-15)
    assert np.all(grad_of(z)[~valid] == 0.0)


def test_cross_entropy_mean_is_over_counted_rows():
    z_host = randn(6, 4, seed=22)
    per_row = host(F.cross_entropy(leaf(z_host), const(TARGET), reduction="none"))
    assert np.all(per_row[TARGET == -100] == 0.0)
    mean = F.cross_entropy(leaf(z_host), const(TARGET)).item()
    np.testing.assert_allclose(mean, per_row[TARGET != -100].mean(), rtol=1e-12)   # 4 rows, not 6


def test_cross_entropy_custom_ignore_index():
    z_host, target = randn(3, 4), np.array([1, 0, 0])
    loss = F.cross_entropy(leaf(z_host), const(target), ignore_index=0)
    np.testing.assert_allclose(loss.item(), -log_softmax_ref(z_host)[0, 1], rtol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_all_ignored_is_zero(reduction):
    z = leaf(randn(3, 4))
    loss = F.cross_entropy(z, const(np.full(3, -100)), reduction=reduction)
    np.testing.assert_array_equal(host(loss), np.zeros(3) if reduction == "none" else 0.0)
    loss.backward(np.ones(loss.shape))
    np.testing.assert_array_equal(grad_of(z), np.zeros((3, 4)))


def test_cross_entropy_stable_at_large_logits():
    z_host = np.array([[1e4, -1e4, 0.0], [1e4, -1e4, 0.0], [-1e4, -1e4, -1e4]])
    target = np.array([0, 1, 2])
    z = leaf(z_host)
    losses = F.cross_entropy(z, const(target), reduction="none")
    np.testing.assert_allclose(host(losses), [0.0, 2e4, math.log(3)], rtol=1e-12, atol=1e-300)
    losses.sum().backward()
    assert np.all(np.isfinite(grad_of(z)))
    np.testing.assert_allclose(grad_of(z), [[0, 0, 0], [1, -1, 0], [1 / 3, 1 / 3, -2 / 3]], atol=1e-12)
    check(lambda t: F.cross_entropy(t, const(target)), leaf(z_host))


@pytest.mark.parametrize("bad", [4, -1, -3])
def test_cross_entropy_target_out_of_range(bad):
    with pytest.raises(IndexError, match=r"target ids must lie in \[0, 4\)"):
        F.cross_entropy(leaf(randn(3, 4)), const(np.array([0, bad, 1])))


def test_cross_entropy_bad_inputs():
    with pytest.raises(TypeError, match="integer class ids.*float"):
        F.cross_entropy(leaf(randn(3, 4)), const(np.array([0.0, 1.0, 2.0])))
    with pytest.raises(ValueError, match=r"logits \(N, C\).*\(2, 3, 4\)"):
        F.cross_entropy(leaf(randn(2, 3, 4)), const(np.zeros((2, 3), dtype=int)))
    with pytest.raises(ValueError, match="'avg'"):
        F.cross_entropy(leaf(randn(3, 4)), const(np.array([0, 1, 2])), reduction="avg")


# --- embedding ----------------------------------------------------------------------------------
IDS = np.array([[0, 2, 0], [4, 0, 2]])


@given(ids_shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
       V=st.integers(1, 4), E=st.integers(1, 3), seed=seeds)
@example(ids_shape=IDS.shape, V=5, E=3, seed=0)
def test_embedding_forward_and_gradcheck(ids_shape, V, E, seed):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, V, size=ids_shape)          # small V: repeats are the rule
    W_host = randn(V, E, seed=seed + 1)
    out = F.embedding(const(ids), leaf(W_host))
    assert out.shape == ids_shape + (E,)
    np.testing.assert_array_equal(host(out), W_host[ids])
    check(lambda W: F.embedding(const(ids), W), leaf(W_host))


def test_embedding_repeated_ids_scatter_add():
    """Upstream ones: row v of the gradient is (how often v occurs) in every column."""
    W = leaf(randn(5, 3, seed=24))
    F.embedding(const(IDS), W).sum().backward()
    counts = np.array([3, 0, 2, 0, 1], dtype=float)             # hand count of IDS
    np.testing.assert_array_equal(grad_of(W), np.repeat(counts[:, None], 3, axis=1))
    W.grad = None
    g = randn(2, 3, 3, seed=25)
    F.embedding(const(IDS), W).backward(g)
    expected = np.zeros((5, 3))
    expected[0] = g[0, 0] + g[0, 2] + g[1, 1]
    expected[2] = g[0, 1] + g[1, 2]
    expected[4] = g[1, 0]
    np.testing.assert_allclose(grad_of(W), expected, rtol=1e-12)


def test_embedding_bad_ids():
    W = leaf(randn(5, 3))
    with pytest.raises(TypeError, match="ids must be integers.*float"):
        F.embedding(const(np.array([0.0, 1.0])), W)
    with pytest.raises(IndexError, match=r"\[0, 5\).*5 rows.*from 0 to 5"):
        F.embedding(const(np.array([0, 5])), W)
    with pytest.raises(IndexError, match=r"\[0, 5\).*from -1 to 1"):
        F.embedding(const(np.array([-1, 1])), W)


# --- dropout ------------------------------------------------------------------------------------
def test_dropout_gradcheck_with_reseeding():
    def fn(x):
        minishare.manual_seed(7)      # the same mask on every call
        return F.dropout(x, p=0.3)
    check(fn, leaf(randn(4, 5, seed=26)))


def test_dropout_forward_statistics_and_gradient():
    x_host = np.ones((200, 100))
    x = leaf(x_host)
    minishare.manual_seed(0)
    y = F.dropout(x, p=0.25)
    out = host(y)
    assert set(np.unique(out)) <= {0.0, 1 / 0.75}                 # dropped, or scaled by 1/(1-p)
    assert abs((out == 0).mean() - 0.25) < 0.015                  # 20 000 draws: sigma = 0.003
    y.backward(np.full(x_host.shape, 2.0))
    np.testing.assert_array_equal(grad_of(x), 2.0 * out)          # the same mask, the same scale


def test_dropout_is_reproducible_and_identity_when_off():
    x = leaf(randn(3, 4))
    minishare.manual_seed(3)
    a = host(F.dropout(x, 0.5))
    minishare.manual_seed(3)
    np.testing.assert_array_equal(host(F.dropout(x, 0.5)), a)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    np.testing.assert_array_equal(host(F.dropout(x, 1.0)), np.zeros((3, 4)))


@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_dropout_bad_probability(p):
    with pytest.raises(ValueError, match=rf"\[0, 1\], got {p}"):
        F.dropout(leaf(randn(3)), p)
