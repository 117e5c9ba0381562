"""minishare.backend and the strict backend: defaults, explicit transfers, refusal of silent
host/device mixing, clear errors for unknown or missing backends, and GPU checks (marked ``gpu``)."""
import math
import os
import sys

import numpy as np
import pytest

import minishare
import minishare.functional as F
from minishare import backend, nn, ops
from conftest import const, grad_of, leaf, randn


def test_active_backend_is_the_one_asked_for():
    assert backend.name == os.environ.get("MINISHARE_BACKEND", "numpy")


def test_default_dtype_is_float32():
    assert backend.default_dtype == np.float32
    assert backend.asarray([1.0, 2.0]).dtype == np.float32
    assert backend.asarray(0.5).dtype == np.float32
    assert backend.asarray(np.ones(2)).dtype == np.float64        # arrays keep their dtype
    assert backend.asarray([1, 2]).dtype.kind == "i"
    assert backend.asarray([1.0], dtype=np.float64).dtype == np.float64


def test_unknown_backend_is_refused_and_nothing_changes():
    before = (backend.name, backend.xp)
    with pytest.raises(ValueError, match="unknown backend 'tpu': choose one of numpy, cupy, strict"):
        backend.use("tpu")
    assert (backend.name, backend.xp) == before


def test_missing_cupy_is_a_clear_error(monkeypatch):
    before = (backend.name, backend.xp)
    monkeypatch.setitem(sys.modules, "cupy", None)      # makes `import cupy` raise ImportError
    with pytest.raises(RuntimeError, match="CuPy is not installed"):
        backend.use("cupy")
    assert (backend.name, backend.xp) == before


def test_to_numpy_and_asarray_round_trip():
    a = np.arange(6.0).reshape(2, 3)
    d = backend.asarray(a)
    assert backend.is_array(d)
    back = backend.to_numpy(d)
    assert type(back) is np.ndarray
    np.testing.assert_array_equal(back, a)
    assert backend.to_numpy(a) is a                     # host data stays where it is


def test_add_at_accumulates_repeated_indices():
    """The one scatter path, ``xp.add.at``, on every backend (CuPy's ``cupyx.scatter_add`` is
    deprecated)."""
    target = backend.xp.zeros(4)
    index, values = backend.asarray(np.array([0, 2, 0, 0])), backend.asarray(np.array([1.0, 2.0, 3.0, 4.0]))
    backend.xp.add.at(target, index, values)
    np.testing.assert_array_equal(backend.to_numpy(target), [8.0, 0.0, 2.0, 0.0])


def test_erf_matches_math_erf():
    x = np.linspace(-3, 3, 13)
    for dtype in (np.float64, np.float32):
        y = backend.erf(backend.asarray(x.astype(dtype)))
        assert y.dtype == dtype and backend.is_array(y)
        rtol = 1e-6 if dtype == np.float32 else 1e-14
        np.testing.assert_allclose(backend.to_numpy(y), [math.erf(v) for v in x], rtol=rtol, atol=1e-7)


def test_manual_seed_makes_the_backend_generator_reproducible():
    minishare.manual_seed(11)
    a = backend.to_numpy(backend.rng().random(5))
    minishare.manual_seed(11)
    np.testing.assert_array_equal(backend.to_numpy(backend.rng().random(5)), a)
    minishare.manual_seed(12)
    assert not np.array_equal(backend.to_numpy(backend.rng().random(5)), a)


# --- every op computes on the active backend: no host arrays leak into outputs or gradients ----
OPS = {
    "arith": lambda x, w: ((x + w[0]) * x - w[1] / 2.0) ** 2 + 1.0 / (w[2] * w[2] + 1.0),
    "reduce": lambda x, w: x.sum(axis=0) + x.max(axis=0) + x.mean(axis=1)[1:] + x.var(axis=1, keepdims=True)[:3, 0],
    "shape": lambda x, w: F.stack(list(F.split(x.T.reshape(12)[::-1], 4)) + [w[:, 0]], axis=0),
    "getitem": lambda x, w: x[backend.asarray(np.array([0, 0, 3]))] + x[x.data > 0].sum(),
    "nonlinear": lambda x, w: F.gelu(x) + F.gelu(x, approximate="tanh") + x.exp() + x.tanh() + F.relu(x),
    "matmul": lambda x, w: x @ w + F.linear(x, w.T, w[0]),
    "softmax": lambda x, w: F.softmax(F.masked_fill(x, np.eye(4, 3, dtype=bool), float("-inf"))) + F.log_softmax(x),
    "layer_norm": lambda x, w: F.layer_norm(x, w[0], w[1]),
    "loss": lambda x, w: F.cross_entropy(x, const(np.array([0, 2, -100, 1]))),
    "embedding": lambda x, w: F.embedding(const(np.array([[1, 0], [1, 2]])), w),
    "dropout": lambda x, w: F.dropout(x, 0.3),
}


@pytest.mark.parametrize("name", OPS)
def test_outputs_and_gradients_live_on_the_backend(name):
    x, w = leaf(randn(4, 3)), leaf(randn(3, 3, seed=1))
    out = OPS[name](x, w)
    assert backend.is_array(out.data)
    (out * out).sum().backward()
    for t in (x, w):
        if t.grad is not None:
            assert backend.is_array(t.grad), f"{name}: grad is {type(t.grad).__name__}"
            assert np.all(np.isfinite(grad_of(t)))


# --- the strict backend -----------------------------------------------------------------------------
def test_strict_refuses_mixing_in_an_op(strict_backend):
    from minishare._strict import MixingError
    assert issubclass(MixingError, TypeError)
    x = minishare.tensor(np.ones(3))
    assert type(x.data).__module__ == "minishare._strict"
    host_array = np.ones(3)
    with pytest.raises(MixingError, match="must not mix"):
        ops.Mul().forward(x.data, host_array)          # an op handed a host array
    with pytest.raises(TypeError):
        x.data + host_array
    with pytest.raises(TypeError):
        host_array + x.data                            # NumPy defers, then the strict side refuses
    with pytest.raises(TypeError):
        backend.xp.exp(host_array)


def test_strict_refuses_implicit_conversion_to_numpy(strict_backend):
    d = backend.asarray(np.arange(3.0))
    with pytest.raises(TypeError, match="implicit conversion"):
        np.asarray(d)
    np.testing.assert_array_equal(backend.to_numpy(d), [0.0, 1.0, 2.0])   # the explicit way
    np.testing.assert_array_equal(minishare.tensor(np.arange(3.0)).numpy(), [0.0, 1.0, 2.0])


def test_strict_backend_trains_a_small_model(strict_backend):
    """A whole forward and backward under the strict backend: nothing mixes silently."""
    minishare.manual_seed(0)
    model = nn.Sequential(nn.Embedding(6, 4), nn.LayerNorm(4), nn.Dropout(0.1), nn.Linear(4, 6))
    ids = const(np.array([[1, 2, 3], [3, 2, 1]]))
    logits = model(ids).reshape(-1, 6)
    loss = F.cross_entropy(logits, const(np.array([2, 3, -100, 2, 1, 0])))
    loss.backward()
    assert np.isfinite(loss.item())
    for p in model.parameters():
        assert backend.is_array(p.grad) and type(p.grad).__module__ == "minishare._strict"


def test_switching_backends_in_a_test_is_undone(strict_backend):
    assert backend.name == "strict"          # the autouse fixture in conftest restores it


# --- on a GPU -----------------------------------------------------------------------------------
@pytest.mark.gpu
def test_cupy_matches_numpy():
    """The same computation on the host and on the GPU agrees, and gradients stay on the GPU."""
    import cupy
    x_host, w_host = randn(4, 3), randn(5, 3, seed=1)
    target = np.array([0, 4, -100, 2])

    def run():
        x, w = leaf(x_host), leaf(w_host)
        loss = F.cross_entropy(F.gelu(F.layer_norm(F.linear(x, w))), const(target))
        loss.backward()
        return loss.item(), grad_of(x), grad_of(w), (x, w)

    backend.use("numpy")
    loss_cpu, gx_cpu, gw_cpu, _ = run()
    backend.use("cupy")
    loss_gpu, gx_gpu, gw_gpu, (x, w) = run()
    assert isinstance(x.grad, cupy.ndarray) and isinstance(w.grad, cupy.ndarray)
    np.testing.assert_allclose(loss_gpu, loss_cpu, rtol=1e-10)
    np.testing.assert_allclose(gx_gpu, gx_cpu, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(gw_gpu, gw_cpu, rtol=1e-8, atol=1e-12)


@pytest.mark.gpu
def test_cupy_gradcheck_and_scatter_add():
    backend.use("cupy")
    minishare.gradcheck(lambda W: F.embedding(const(np.array([1, 1, 0])), W), leaf(randn(3, 2)))
    x = leaf(randn(4, 3))
    x[backend.asarray(np.array([0, 0, 2]))].sum().backward()
    np.testing.assert_array_equal(grad_of(x)[:, 0], [2.0, 0.0, 1.0, 0.0])
    with pytest.raises(TypeError):
        np.ones(3) + backend.asarray(np.ones(3))      # CuPy refuses silent mixing too
