"""Reductions (sum, mean, max, var) and shape ops (reshape, transpose, indexing, concatenate, stack,
split): gradcheck in float64 on random shapes and axes, forward values against NumPy."""
import numpy as np
import pytest
from hypothesis import assume, given, strategies as st
from hypothesis.extra import numpy as hnp

import minishare
import minishare.functional as F
from conftest import check, dev, grad_of, host, leaf, randn

seeds = st.integers(0, 2**16)


@st.composite
def shape_axis_keepdims(draw):
    """A shape, an ``axis`` (None, an int, or a tuple; negative allowed) and ``keepdims``."""
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3))
    nd = len(shape)
    kind = draw(st.sampled_from(["none", "int", "tuple"])) if nd else "none"
    if kind == "none":
        axis = None
    elif kind == "int":
        axis = draw(st.integers(-nd, nd - 1))
    else:
        axes = draw(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True))
        axis = tuple(a - nd if draw(st.booleans()) else a for a in axes)
    return shape, axis, draw(st.booleans())


REDUCTIONS = {  # name: (minishare, NumPy reference)
    "sum": (lambda x, axis, keepdims: x.sum(axis=axis, keepdims=keepdims), np.sum),
    "mean": (lambda x, axis, keepdims: x.mean(axis=axis, keepdims=keepdims), np.mean),
    "max": (lambda x, axis, keepdims: x.max(axis=axis, keepdims=keepdims), np.max),
    "var": (lambda x, axis, keepdims: x.var(axis=axis, keepdims=keepdims), np.var),
}


@pytest.mark.parametrize("name", REDUCTIONS)
@given(case=shape_axis_keepdims(), seed=seeds)
def test_reductions(name, case, seed):
    shape, axis, keepdims = case
    op, ref = REDUCTIONS[name]
    x_host = randn(*shape, seed=seed)      # continuous values: no ties for max
    out = op(leaf(x_host), axis, keepdims)
    expected = np.asarray(ref(x_host, axis=axis, keepdims=keepdims))
    assert out.shape == expected.shape
    assert out.dtype == np.float64
    np.testing.assert_allclose(host(out), expected, rtol=1e-12, atol=1e-14)
    check(lambda x: op(x, axis, keepdims), leaf(x_host))


@given(case=shape_axis_keepdims(), seed=seeds)
def test_var_with_ddof(case, seed):
    shape, axis, keepdims = case
    x_host = randn(*shape, seed=seed)
    n = x_host.size // max(np.asarray(x_host.sum(axis=axis, keepdims=True)).size, 1)
    assume(n > 1)
    out = leaf(x_host).var(axis=axis, keepdims=keepdims, ddof=1)
    np.testing.assert_allclose(host(out), np.var(x_host, axis=axis, keepdims=keepdims, ddof=1), rtol=1e-12)
    check(lambda x: x.var(axis=axis, keepdims=keepdims, ddof=1), leaf(x_host))


def test_sum_and_mean_gradients_by_hand():
    x = leaf(randn(2, 3))
    x.mean(axis=1).sum().backward()
    np.testing.assert_allclose(grad_of(x), np.full((2, 3), 1 / 3))


def test_max_splits_the_gradient_between_ties():
    x = leaf(np.array([[1.0, 3.0, 3.0], [2.0, 0.0, -1.0]]))
    x.max(axis=1).sum().backward()
    np.testing.assert_array_equal(grad_of(x), [[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]])


def test_reduction_axis_out_of_range():
    with pytest.raises(ValueError, match="axis 2 is out of range.*2 dimensions"):
        leaf(randn(2, 3)).sum(axis=2)


# --- reshape and transpose --------------------------------------------------------------------------
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3), seed=seeds,
       unknown=st.integers(0, 3))
def test_reshape(shape, seed, unknown):
    target = list(reversed(shape)) + [1]
    if unknown < len(target):
        target[unknown] = -1                   # one size left for reshape to infer
    x_host = randn(*shape, seed=seed)
    out = leaf(x_host).reshape(tuple(target))
    np.testing.assert_array_equal(host(out), x_host.reshape(target))
    check(lambda x: x.reshape(*target), leaf(x_host))


def test_reshape_bad_size_names_shapes():
    with pytest.raises(ValueError, match=r"\(2, 3\).*6 elements.*\(4, 2\)"):
        leaf(randn(2, 3)).reshape(4, 2)


@st.composite
def shape_and_permutation(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=3))
    perm = draw(st.permutations(range(len(shape))))
    return shape, tuple(a - len(shape) if draw(st.booleans()) else a for a in perm)


@given(case=shape_and_permutation(), seed=seeds)
def test_transpose(case, seed):
    shape, axes = case
    x_host = randn(*shape, seed=seed)
    out = leaf(x_host).transpose(axes)
    np.testing.assert_array_equal(host(out), np.transpose(x_host, axes))
    check(lambda x: x.transpose(*axes), leaf(x_host))


def test_transpose_default_and_T_reverse_axes():
    x_host = randn(2, 3, 4)
    np.testing.assert_array_equal(host(leaf(x_host).transpose()), x_host.T)
    np.testing.assert_array_equal(host(leaf(x_host).T), x_host.T)
    check(lambda x: x.T, leaf(x_host))


def test_transpose_rejects_a_non_permutation():
    with pytest.raises(ValueError, match="not a permutation"):
        leaf(randn(2, 3)).transpose(0, 0)


# --- indexing ---------------------------------------------------------------------------------------
INDICES = {  # name: host index (NumPy arrays are moved to the backend before use)
    "int": 1,
    "negative int": -1,
    "slice": slice(1, None),
    "two ints": (2, 1),
    "int and slice": (slice(None), 1),
    "negative step": (slice(None, None, -1), slice(0, 3, 2)),
    "ellipsis": (Ellipsis, 0),
    "newaxis": (None, slice(1, 3)),
    "list with repeats": [0, 0, 3, 1, 0],
    "int array with repeats": np.array([[3, 0], [0, 3]]),
    "int arrays pairs with repeats": (np.array([0, 0, 3, 0]), np.array([2, 2, 1, 2])),
    "int array and slice": (slice(1, 3), np.array([2, 2, 0])),
    "boolean mask": np.random.default_rng(5).random((4, 3)) < 0.5,
    "boolean rows": np.array([True, False, True, True]),
}


def to_backend(index):
    if isinstance(index, np.ndarray):
        return dev(index)
    if isinstance(index, tuple):
        return tuple(to_backend(i) for i in index)
    return index


@pytest.mark.parametrize("name", INDICES)
def test_getitem(name):
    x_host = randn(4, 3, seed=14)
    index = to_backend(INDICES[name])
    x = leaf(x_host)
    out = x[index]
    expected = x_host[INDICES[name]]
    np.testing.assert_array_equal(host(out), expected)
    # hand-worked gradient for upstream ones: how often each element was picked
    counts = np.zeros(x_host.shape)
    np.add.at(counts, INDICES[name], 1.0)
    out.backward(np.ones(expected.shape))
    np.testing.assert_array_equal(grad_of(x), counts)
    check(lambda t: t[index], leaf(x_host))


def test_getitem_repeated_ids_accumulate_by_hand():
    x = leaf(randn(5))
    x[[0, 0, 2, 4, 0]].sum().backward()
    np.testing.assert_array_equal(grad_of(x), [3.0, 0.0, 1.0, 0.0, 1.0])


def test_getitem_with_a_tensor_index():
    x = leaf(randn(4, 2))
    x[minishare.tensor(np.array([1, 1]))].sum().backward()
    np.testing.assert_array_equal(grad_of(x), [[0, 0], [2, 2], [0, 0], [0, 0]])


# --- concatenate, stack, split ----------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concatenate(axis):
    sizes = [1, 3, 2]
    hosts = [randn(*((n, 2) if axis == 0 else (2, n)), seed=i) for i, n in enumerate(sizes)]
    out = F.concatenate([leaf(h) for h in hosts], axis=axis)
    np.testing.assert_array_equal(host(out), np.concatenate(hosts, axis=axis))
    check(lambda a, b, c: F.concatenate([a, b, c], axis=axis), *[leaf(h) for h in hosts])


def test_concatenate_with_a_constant():
    a = leaf(randn(2, 2))
    F.concatenate([a, minishare.tensor(randn(1, 2))], axis=0).sum().backward()
    np.testing.assert_array_equal(grad_of(a), np.ones((2, 2)))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_stack(axis):
    hosts = [randn(2, 3, seed=i) for i in range(3)]
    out = F.stack([leaf(h) for h in hosts], axis=axis)
    np.testing.assert_array_equal(host(out), np.stack(hosts, axis=axis))
    check(lambda a, b, c: F.stack([a, b, c], axis=axis), *[leaf(h) for h in hosts])


@pytest.mark.parametrize("sections, axis", [(3, 1), (2, 0), ([1, 4], 1), ([2], -1)])
def test_split(sections, axis):
    x_host = randn(4, 6, seed=15)
    pieces = F.split(leaf(x_host), sections, axis=axis)
    expected = np.split(x_host, sections, axis=axis)
    assert len(pieces) == len(expected)
    for got, want in zip(pieces, expected):
        np.testing.assert_array_equal(host(got), want)

    def weighted(x):   # every piece with its own weight: each must route back to its own place
        parts = F.split(x, sections, axis=axis)
        return F.concatenate([p * float(k + 1) for k, p in enumerate(parts)], axis=axis)
    check(weighted, leaf(x_host))


def test_split_uneven_sections_raise():
    with pytest.raises(ValueError, match="5 elements along axis 0.*2 equal sections"):
        F.split(leaf(randn(5)), 2)
