"""The readable op and the fast op: every op with a fast form (``Function.fast``) is checked in both
forms against finite differences, and the two against each other, in float64 (and in float32 to
float32's precision); ``minishare.backend.use_reference_ops`` and ``MINISHARE_OPS`` pick the form."""
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import minishare
import minishare.functional as F
from minishare import backend, ops
from minishare.autograd import Function
from minishare.ops.elementwise import sum_rows
from conftest import check, const, dev, grad_of, host, leaf, randn

NEG_INF = float("-inf")


@pytest.fixture(autouse=True)
def _fast_forms_after():
    yield
    backend.use_reference_ops(False)


def _attention_mask(shape, seed):
    """A boolean keep-mask of ``shape`` with its first row masked entirely."""
    mask = np.random.default_rng(seed).random(shape) > 0.3
    mask[(0,) * (len(shape) - 1)] = False
    return dev(mask)


# Each case: (name, a function of float64 leaves, the leaves' host arrays). Values are spread so
# that the GELUs see their tails (|x| up to 12) and the softmaxes large logits.
def _cases():
    x = randn(3, 4, 7, seed=1) * 4
    w, b = randn(7, seed=2), randn(7, seed=3)
    targets = const(np.array([0, 6, -100, 3, 2, -100]))
    return [
        ("softmax, last axis", lambda x: F.softmax(x, axis=-1), [x]),
        ("softmax, axis 1", lambda x: F.softmax(x, axis=1), [x]),
        ("softmax with a mask", lambda x: F.masked_softmax(x, _attention_mask(x.shape, 0), axis=-1), [x]),
        ("softmax with a broadcast mask", lambda x: F.masked_softmax(x, _attention_mask((3, 1, 7), 1)), [x]),
        ("layer_norm", lambda x, w, b: F.layer_norm(x, w, b, eps=1e-5), [x, w, b]),
        ("gelu tanh", lambda x: F.gelu(x, approximate="tanh"), [x * 3]),
        ("gelu erf", lambda x: F.gelu(x), [x * 3]),
        ("cross_entropy mean", lambda z: F.cross_entropy(z, targets), [randn(6, 7, seed=4) * 5]),
        ("cross_entropy sum", lambda z: F.cross_entropy(z, targets, reduction="sum"), [randn(6, 7, seed=5)]),
        ("cross_entropy none", lambda z: F.cross_entropy(z, targets, reduction="none"), [randn(6, 7, seed=6)]),
    ]


CASES = _cases()
IDS = [name for name, _, _ in CASES]


def _run(fn, arrays, reference, dtype=np.float64, seed=0):
    """(output, gradients) of ``fn`` on leaves of ``arrays``, in one form, for a random cotangent."""
    backend.use_reference_ops(reference)
    leaves = [leaf(a.astype(dtype)) for a in arrays]
    out = fn(*leaves)
    out.backward(backend.asarray(np.random.default_rng(seed).standard_normal(out.shape).astype(dtype)))
    return host(out), [grad_of(t) for t in leaves], type(out._ctx)


def test_every_op_with_a_fast_form_is_checked_here():
    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)
    with_fast = {cls for cls in subclasses(Function) if cls.fast is not None and cls.fast is not cls}
    assert with_fast == {ops.Softmax, ops.LayerNorm, ops.GELU, ops.CrossEntropy}
    for cls in with_fast:
        assert issubclass(cls.fast, cls) and cls.fast.__name__ == "Fast" + cls.__name__


@pytest.mark.parametrize("name, fn, arrays", CASES, ids=IDS)
@pytest.mark.parametrize("reference", [True, False], ids=["reference", "fast"])
def test_each_form_against_finite_differences(name, fn, arrays, reference):
    backend.use_reference_ops(reference)
    check(fn, *[leaf(a) for a in arrays])


@pytest.mark.parametrize("name, fn, arrays", CASES, ids=IDS)
def test_the_two_forms_agree_in_float64(name, fn, arrays):
    out_ref, grads_ref, kind_ref = _run(fn, arrays, reference=True)
    out_fast, grads_fast, kind_fast = _run(fn, arrays, reference=False)
    assert kind_fast is kind_ref.fast and kind_ref.fast is not None    # each form really ran
    np.testing.assert_allclose(out_fast, out_ref, rtol=1e-12, atol=1e-14)
    for g_fast, g_ref in zip(grads_fast, grads_ref):
        np.testing.assert_allclose(g_fast, g_ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name, fn, arrays", CASES, ids=IDS)
def test_the_two_forms_agree_in_float32_and_stay_float32(name, fn, arrays):
    out_ref, grads_ref, _ = _run(fn, arrays, reference=True, dtype=np.float32)
    out_fast, grads_fast, _ = _run(fn, arrays, reference=False, dtype=np.float32)
    assert out_fast.dtype == out_ref.dtype == np.float32
    np.testing.assert_allclose(out_fast, out_ref, rtol=2e-5, atol=2e-6)
    for g_fast, g_ref in zip(grads_fast, grads_ref):
        assert g_fast.dtype == g_ref.dtype == np.float32
        np.testing.assert_allclose(g_fast, g_ref, rtol=2e-4, atol=2e-5)


def test_a_subclass_runs_its_own_code_not_its_parents_fast_form():
    class Doubled(ops.Softmax):
        def backward(self, grad):
            return (2 * super().backward(grad)[0],)
    x = leaf(randn(2, 5, seed=9))
    Doubled.apply(x).backward(dev(randn(2, 5, seed=10)))
    twice = grad_of(x)
    x.grad = None
    F.softmax(x).backward(dev(randn(2, 5, seed=10)))
    np.testing.assert_allclose(twice, 2 * grad_of(x), rtol=1e-12)


def test_a_masked_softmax_is_the_softmax_of_the_masked_fill():
    x, mask = leaf(randn(2, 3, 5, seed=7)), _attention_mask((2, 3, 5), 2)
    for reference in (True, False):
        backend.use_reference_ops(reference)
        fused = host(F.masked_softmax(x, mask))
        np.testing.assert_array_equal(fused, host(F.softmax(F.masked_fill(x, ~mask, NEG_INF))))
        assert (fused[0, 0] == 0).all() and (fused[host(~mask)] == 0).all()


def test_gelu_tanh_far_in_its_tails_is_finite_and_exact():
    x = np.array([-1e4, -90.0, -45.0, -12.0, 0.0, 12.0, 45.0, 1e4], dtype=np.float32)
    for reference in (True, False):
        out, (grad,), _ = _run(lambda t: F.gelu(t, approximate="tanh"), [x], reference, np.float32)
        assert np.isfinite(out).all() and np.isfinite(grad).all()
        np.testing.assert_allclose(out[x <= -12], 0, atol=1e-30)
        np.testing.assert_array_equal(out[x >= 12], x[x >= 12])


def test_the_fast_tanh_gelu_rounds_as_its_tanh_does_in_float32():
    """The book's results are what the fast forms compute in float32, to the last bit. A form equal
    to the tanh GELU in exact arithmetic but rounded otherwise (the logistic 1 / (1 + exp(-2u)),
    faster on CPUs without AVX-512) changed them a few hundred updates later, so a rerun of
    ``reproduce`` no longer printed the book's numbers. Here y and dy/dx are written out in plain
    NumPy, in float32 and in the fast form's order of operations. (A GPU's tanh rounds otherwise.)"""
    if backend.name == "cupy":
        pytest.skip("CuPy's tanh is not NumPy's")
    x = (np.random.default_rng(3).standard_normal(10_000) * 3).astype(np.float32)
    c = math.sqrt(2 / math.pi)
    x2 = x * x
    h = (np.tanh((x2 * (c * 0.044715) + c) * x) + 1) * 0.5                  # (1 + tanh u) / 2
    dydx = ((x2 * (2 * c * 3 * 0.044715) + 2 * c) * x * (1 - h) + 1) * h
    t = leaf(x)
    y = F.gelu(t, approximate="tanh")
    y.backward(backend.asarray(np.ones_like(x)))
    assert host(y).dtype == np.float32
    np.testing.assert_array_equal(host(y), x * h)
    np.testing.assert_array_equal(grad_of(t), dydx)


def test_sum_rows_in_both_forms_is_the_column_sum():
    a = randn(9, 4, seed=8)
    for reference in (True, False):
        backend.use_reference_ops(reference)
        np.testing.assert_allclose(host(sum_rows(dev(a))), a.sum(axis=0), rtol=1e-13)


def test_a_whole_model_step_gives_the_same_gradients_in_both_forms():
    from minishare.models import AlbertConfig, AlbertForPreTraining
    config = AlbertConfig.from_preset("albert-tiny", vocab_size=50, hidden_size=16, embedding_size=8,
                                      num_attention_heads=2, intermediate_size=32, num_hidden_layers=2,
                                      hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    rng = np.random.default_rng(0)
    ids = rng.integers(5, 50, (2, 6))
    batch = dict(input_ids=const(ids), attention_mask=const(np.array([[1] * 6, [1] * 4 + [0] * 2])),
                 labels=const(np.where(rng.random((2, 6)) < 0.5, ids, -100)), sentence_order_label=const([0, 1]))
    grads = []
    for reference in (True, False):
        backend.use_reference_ops(reference)
        minishare.manual_seed(0)
        model = AlbertForPreTraining(config).double()
        model(**batch).loss.backward()
        grads.append({name: grad_of(p) for name, p in model.named_parameters()})
    assert grads[0].keys() == grads[1].keys()
    for name in grads[0]:
        np.testing.assert_allclose(grads[1][name], grads[0][name], rtol=1e-9, atol=1e-12, err_msg=name)


def _python(code, **env):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, **env, "PYTHONPATH": os.pathsep.join(sys.path)})


def test_the_environment_variable_picks_the_form_and_refuses_others():
    code = "import minishare; print(minishare.backend.reference_ops)"
    assert _python(code, MINISHARE_OPS="reference").stdout.strip() == "True"
    assert _python(code, MINISHARE_OPS="fast").stdout.strip() == "False"
    bad = _python(code, MINISHARE_OPS="quick")
    assert bad.returncode != 0
    assert bad.stderr.strip().splitlines() == [
        "minishare: error: MINISHARE_OPS='quick': unknown form of the ops 'quick': choose one of fast, reference"]
