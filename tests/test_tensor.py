"""The autograd engine (minishare/tensor.py, minishare/autograd.py): accumulation, repeated
backward, no_grad, detach, errors, deep graphs and the dtype rules. Expected gradients are worked
out by hand in NumPy."""
import importlib
import sys

import numpy as np
import pytest

import minishare
import minishare.functional as F
from minishare import backend
from conftest import check, const, grad_of, host, leaf, randn

autograd = importlib.import_module("minishare.autograd")   # the walk and accumulate


# --- gradient accumulation --------------------------------------------------------------------------
def check_accumulation():
    """A tensor used several times must receive the sum of every use's gradient.

    w is used five times: in w*a, twice in w*w, and through h = 3w, which is itself used twice
    (h*h and h), so both the leaf and an intermediate result collect several gradients.
        L = Σ w a + Σ w w + Σ h h + Σ h,   h = 3 w
    Per use, by hand:  a,  w,  w,  2·(3·3w) = 18w,  3.
    """
    w_host, a_host = randn(3, 4, seed=1), randn(3, 4, seed=2)
    w, a = leaf(w_host), const(a_host)
    h = w * 3.0
    loss = (w * a).sum() + (w * w).sum() + (h * h).sum() + h.sum()
    loss.backward()
    per_use = [a_host, w_host, w_host, 18 * w_host, np.full((3, 4), 3.0)]
    np.testing.assert_allclose(grad_of(w), sum(per_use), rtol=1e-12, atol=1e-12)


def test_uses_of_a_tensor_accumulate():
    check_accumulation()


def test_accumulation_check_fails_when_accumulation_is_assignment(monkeypatch):
    """The check above can fail: with assignment instead of addition, only one use survives."""
    monkeypatch.setattr(autograd, "accumulate", lambda total, grad: grad)
    with pytest.raises(AssertionError):
        check_accumulation()


def test_accumulate_adds_into_a_new_array():
    g = backend.asarray(np.array([1.0, 2.0]))
    first = autograd.accumulate(None, g)
    total = autograd.accumulate(first, g)
    np.testing.assert_array_equal(host(total), [2.0, 4.0])
    np.testing.assert_array_equal(host(g), [1.0, 2.0])  # the sum went into a new array


def test_each_leaf_grad_is_an_array_of_its_own():
    """Add's backward hands one gradient array to both inputs, and Sum's is a broadcast view; the
    leaves still get writable gradients of their own, so scaling one in place leaves the other."""
    a, b = leaf(np.ones(3)), leaf(np.ones(3))
    (a + b).sum().backward()
    a.grad *= 2                                         # what an in-place clipping would do
    np.testing.assert_array_equal(host(a.grad), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(host(b.grad), [1.0, 1.0, 1.0])


def test_shared_embedding_rows_and_tensor_reuse_accumulate():
    """The same table used by an embedding lookup and a matmul (tied input/output embeddings)."""
    W_host, x_host = randn(5, 3, seed=3), randn(2, 3, seed=4)
    ids = np.array([1, 1, 4])
    W = leaf(W_host)
    loss = F.embedding(const(ids), W).sum() + (leaf(x_host, False) @ W.T).sum()
    loss.backward()
    expected = np.zeros((5, 3))
    for i in ids:                 # each lookup adds ones to its row
        expected[i] += 1
    expected += x_host.sum(axis=0)[None, :]     # d Σ x Wᵀ / dW_vj = Σ_n x_nj for every row v
    np.testing.assert_allclose(grad_of(W), expected, rtol=1e-12)


def test_second_backward_without_zeroing_adds_again():
    x_host = randn(4, seed=5)
    x = leaf(x_host)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    np.testing.assert_allclose(grad_of(x), 2 * x_host)
    y.backward()                                   # same graph again: adds, as in PyTorch
    np.testing.assert_allclose(grad_of(x), 4 * x_host)
    with pytest.raises(RuntimeError, match="second time.*retain_graph=True"):
        y.backward()                               # the saved arrays are gone now
    np.testing.assert_allclose(grad_of(x), 4 * x_host)
    (x * 3.0).sum().backward()                     # a new graph: adds too
    np.testing.assert_allclose(grad_of(x), 4 * x_host + 3)
    x.grad = None                                  # zeroing, then a fresh gradient
    (x * 3.0).sum().backward()
    np.testing.assert_allclose(grad_of(x), np.full(4, 3.0))


def test_only_leaves_keep_grad():
    x = leaf(randn(3))
    y = x * 2.0
    (y * y).sum().backward()
    assert x.grad is not None
    assert y.grad is None and not y.is_leaf and x.is_leaf


def test_backward_with_explicit_grad():
    x_host, g_host = randn(2, 3, seed=6), randn(2, 3, seed=7)
    x = leaf(x_host)
    (x * 3.0).backward(g_host)                     # a host array: moved explicitly
    np.testing.assert_allclose(grad_of(x), 3 * g_host)
    x.grad = None
    (x * 3.0).backward(const(g_host))              # or a Tensor
    np.testing.assert_allclose(grad_of(x), 3 * g_host)


def test_inputs_without_requires_grad_get_no_grad():
    x, c = leaf(randn(3)), const(randn(3, seed=1))
    (x * c).sum().backward()
    assert c.grad is None and x.grad is not None


# --- no_grad and detach -----------------------------------------------------------------------------
def test_no_grad_records_no_graph():
    x = leaf(randn(3))
    assert minishare.is_grad_enabled()
    with minishare.no_grad():
        assert not minishare.is_grad_enabled()
        y = (x * 2.0).exp().sum()
    assert minishare.is_grad_enabled()
    assert not y.requires_grad and y.is_leaf and y._ctx is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.backward()


def test_no_grad_restores_state_after_an_exception():
    with pytest.raises(KeyError):
        with minishare.no_grad():
            raise KeyError("boom")
    assert minishare.is_grad_enabled()


def test_detach_cuts_the_graph():
    x_host = randn(4, seed=8)
    x = leaf(x_host)
    d = (x * 2.0).detach()
    assert not d.requires_grad and d.is_leaf
    np.testing.assert_array_equal(host(d), 2 * x_host)
    (d * x).sum().backward()
    np.testing.assert_allclose(grad_of(x), 2 * x_host)   # d is a constant: not 4x
    assert d.grad is None


# --- errors -----------------------------------------------------------------------------------------
def test_backward_on_non_scalar_without_grad_raises():
    y = leaf(randn(2, 3)) * 2.0
    with pytest.raises(RuntimeError, match=r"one-element.*\(2, 3\)"):
        y.backward()


def test_backward_grad_of_wrong_shape_raises():
    y = leaf(randn(2, 3)) * 2.0
    with pytest.raises(ValueError, match=r"\(3, 2\).*\(2, 3\)"):
        y.backward(np.ones((3, 2)))


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        const(randn(3)).sum().backward()


def test_integer_tensor_cannot_require_grad():
    with pytest.raises(TypeError, match="floating-point"):
        minishare.tensor([1, 2, 3], requires_grad=True)


def test_item():
    assert leaf(np.array([2.5])).item() == 2.5
    with pytest.raises(ValueError, match=r"one element.*\(2,\)"):
        leaf(randn(2)).item()


# --- deep graphs --------------------------------------------------------------------------------
def test_deep_graph_does_not_hit_the_recursion_limit():
    n = 5000
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)                # Python's default: a recursive traversal fails here
    try:
        x = leaf(np.array([0.5, -1.0]))
        y = x
        for _ in range(n):
            y = y * 1.0001 + 0.0               # 2n ops in one chain
        y.sum().backward()
        np.testing.assert_allclose(grad_of(x), np.full(2, 1.0001 ** n), rtol=1e-10)
        del y                                  # freeing the chain must not recurse either
    finally:
        sys.setrecursionlimit(limit)


# --- dtype rules --------------------------------------------------------------------------------
def test_python_floats_make_float32():
    assert minishare.tensor([1.0, 2.0]).dtype == np.float32
    assert minishare.tensor(3.0).dtype == np.float32
    assert minishare.tensor([1, 2]).dtype.kind == "i"


def test_numpy_arrays_keep_their_dtype():
    assert minishare.tensor(np.ones(3)).dtype == np.float64
    assert minishare.tensor(np.ones(3, dtype=np.float32)).dtype == np.float32
    assert minishare.tensor(np.array(2.0)).dtype == np.float64


def test_numpy_scalars_keep_their_dtype():
    """NumPy reductions return NumPy scalars (np.float64), not arrays: they must keep their dtype
    like arrays do, or every full reduction of float64 data would drop to float32."""
    assert minishare.tensor(np.float64(2.0)).dtype == np.float64
    assert minishare.tensor(np.float32(2.0)).dtype == np.float32


def test_python_numbers_do_not_promote_float32():
    x = leaf(np.array([1.0, 2.0], dtype=np.float32))
    outs = [x * 2, 2 * x, x + 1, 1 + x, x - 1.5, 1.5 - x, x / 2, 2 / x, x ** 2, -x,
            x * np.float64(2.0)]
    for out in outs:
        assert out.dtype == np.float32
    sum(o.sum() for o in outs).backward()
    assert x.grad.dtype == np.float32


FLOAT64_OPS = {
    "add": lambda x, w: x + w,
    "mul_scalar": lambda x, w: x * 2,
    "div": lambda x, w: x / (w * w + 1.0),
    "pow": lambda x, w: x ** 3,
    "matmul": lambda x, w: x @ w.T,
    "linear": lambda x, w: F.linear(x, w, w[0]),
    "exp_log_sqrt_tanh": lambda x, w: ((x * x + 1.0).log().sqrt() + x.exp()).tanh(),
    "relu_gelu": lambda x, w: F.relu(x) + F.gelu(x) + F.gelu(x, approximate="tanh"),
    "sum_axis": lambda x, w: x.sum(axis=1),
    "sum_all": lambda x, w: x.sum(),
    "mean_all": lambda x, w: x.mean(),
    "max_all": lambda x, w: x.max(),
    "var_all": lambda x, w: x.var(),
    "shape": lambda x, w: F.concatenate(F.split(x.T.reshape(-1), 3), axis=0)[1:],
    "softmax": lambda x, w: F.softmax(x) + F.log_softmax(x, axis=0),
    "layer_norm": lambda x, w: F.layer_norm(x, w[0], w[1]),
    "dropout": lambda x, w: F.dropout(x, 0.5),
    "cross_entropy_mean": lambda x, w: F.cross_entropy(x, const(np.array([0, 2, 1]))),
    "cross_entropy_sum": lambda x, w: F.cross_entropy(x, const(np.array([0, 2, 1])), reduction="sum"),
    "embedding": lambda x, w: F.embedding(const(np.array([1, 0, 1])), w),
    "where": lambda x, w: F.masked_fill(x, np.eye(3, dtype=bool), 0.0),
    "scalar_product": lambda x, w: x[0, 0] * x[1, 1],
}


@pytest.mark.parametrize("name", FLOAT64_OPS)
def test_float64_stays_float64_end_to_end(name):
    """float64 in, float64 out, float64 gradients: gradcheck depends on it."""
    x, w = leaf(randn(3, 3, seed=9)), leaf(randn(3, 3, seed=10))
    out = FLOAT64_OPS[name](x, w)
    assert out.dtype == np.float64, f"{name} returned {out.dtype}"
    (out * out).sum().backward()
    for t in (x, w):
        if t.grad is not None:
            assert t.grad.dtype == np.float64


@pytest.mark.parametrize("name", FLOAT64_OPS)
def test_float32_stays_float32_end_to_end(name):
    """The training default: float32 in, float32 out (no silent promotion by constants)."""
    x = leaf(randn(3, 3, seed=9).astype(np.float32))
    w = leaf(randn(3, 3, seed=10).astype(np.float32))
    out = FLOAT64_OPS[name](x, w)
    assert out.dtype == np.float32, f"{name} returned {out.dtype}"
    (out * out).sum().backward()
    for t in (x, w):
        if t.grad is not None:
            assert t.grad.dtype == np.float32


def test_zero_dimensional_tensors():
    """0-d tensors (scalars) keep float64 and get a 0-d gradient that converts to NumPy."""
    x = leaf(np.array(1.5))
    y = x * x * 2.0
    assert y.dtype == np.float64 and y.shape == ()
    y.backward()
    assert grad_of(x).shape == ()
    np.testing.assert_allclose(grad_of(x), 4 * 1.5)
    check(lambda a: a * a * 2.0, leaf(np.array(1.5)))


def test_tensor_attributes():
    t = leaf(randn(2, 3, 4))
    assert t.shape == (2, 3, 4) and t.ndim == 3 and t.size == 24 and len(t) == 2
    assert "requires_grad=True" in repr(t)
    assert backend.is_array(t.data)


def test_backward_frees_what_forward_saved():
    """As PyTorch does without retain_graph: once backward has used an op's saved arrays, they
    are dropped, so an intermediate result is freed while backward runs, not when the graph goes."""
    import weakref
    x = leaf(randn(3, 4, seed=2))
    a = (x * 2.0).exp()                           # an intermediate result, saved by the product below
    loss = (a * a).sum()
    saved = weakref.ref(a.data)
    del a                                         # only the graph holds it now
    assert saved() is not None
    loss.backward()
    assert saved() is None
