"""The autograd's guarantees as PyTorch users expect them (issue 13): a version counter catches a
tensor changed in place after the forward that saved it; a parameter's gradient and its updates
keep the parameter's dtype whatever the dtype of the data; ``tensor`` copies, ``as_tensor`` does
not; tensors hold numbers only; ``len`` and ``bool`` behave as PyTorch's."""
import numpy as np
import pytest

import minishare
from minishare import backend, optim
from minishare.nn import Parameter

from conftest import dev, host

IN_PLACE = "changed in place"


def weights(dtype=np.float32):
    return minishare.tensor(np.array([1.0, 2.0, 3.0], dtype=dtype), requires_grad=True)


# --- the version counter --------------------------------------------------------------------------
def change_data(t):
    t.data += 1.0                      # NumPy's in-place add, through the tensor's data attribute


def change_item(t):
    with minishare.no_grad():
        t[0] = 10.0


def change_add(t):
    with minishare.no_grad():
        t.add_(1.0)


def change_zero(t):
    with minishare.no_grad():
        t.zero_()


def change_copy(t):
    with minishare.no_grad():
        t.copy_(minishare.tensor(np.zeros(3, dtype=t.dtype)))


def change_detached(t):
    t.detach().mul_(2.0)               # a detached tensor shares the data and its version counter


@pytest.mark.parametrize("change", [change_data, change_item, change_add, change_zero, change_copy,
                                    change_detached])
def test_leaf_changed_after_forward_makes_backward_raise(change):
    w = weights()
    loss = (w * w).sum()               # Mul saves w to compute 2w
    change(w)
    with pytest.raises(RuntimeError, match=IN_PLACE) as error:
        loss.backward()
    message = str(error.value)
    assert "Mul" in message and "(3,)" in message and "leaf" in message
    assert w.grad is None


def test_intermediate_changed_after_forward_makes_backward_raise():
    w = weights()
    h = w * 2.0
    loss = (h * h).sum()
    h.data *= 0.0
    with pytest.raises(RuntimeError, match=IN_PLACE) as error:
        loss.backward()
    assert "result of Mul" in str(error.value)


def test_optimizer_step_between_forward_and_backward_is_caught():
    w = Parameter(np.array([1.0, 2.0, 3.0], dtype=np.float32))
    opt = optim.SGD([w], lr=0.1)
    w.grad = backend.xp.ones_like(w.data)
    loss = (w * w).sum()
    opt.step()
    with pytest.raises(RuntimeError, match=IN_PLACE):
        loss.backward()


def test_changes_before_the_forward_or_after_the_backward_are_fine():
    w = weights(np.float64)
    change_add(w)                      # w = [2, 3, 4]
    loss = (w * w).sum()
    loss.backward()
    change_add(w)
    assert np.allclose(host(w.grad), [4.0, 6.0, 8.0])     # 2w with the w the forward saw


def test_in_place_change_of_a_tensor_that_records_gradients_is_refused():
    """As PyTorch refuses it for a leaf: the graph would not know of the change."""
    w = weights()
    with pytest.raises(RuntimeError, match="requires grad"):
        w.add_(1.0)
    with pytest.raises(RuntimeError, match="requires grad"):
        w[0] = 5.0


# --- dtype promotion ------------------------------------------------------------------------------
@pytest.mark.parametrize("data_dtype", [np.float64, np.int64, np.int32, np.bool_])
def test_float32_parameter_gets_a_float32_gradient_whatever_the_data(data_dtype):
    w = weights(np.float32)
    x = minishare.tensor(np.array([1, 0, 1]).astype(data_dtype))
    (w * x).sum().backward()
    assert w.grad.dtype == np.float32
    assert np.allclose(host(w.grad), [1.0, 0.0, 1.0])


@pytest.mark.parametrize("data_dtype", [np.int64, np.int32, np.bool_])
def test_integer_data_does_not_widen_a_float32_result(data_dtype):
    w = weights(np.float32)
    x = np.array([1, 0, 1]).astype(data_dtype)
    for result in (w * dev(x), w + dev(x), w - dev(x), dev(x) * w,
                   minishare.tensor(np.ones((2, 3), dtype=data_dtype)) @ w.reshape(3, 1)):
        assert result.dtype == np.float32


def test_float64_data_gives_a_float64_result_but_a_float32_gradient():
    """As in PyTorch: the result takes the wider float; the gradient the parameter's own dtype."""
    w = weights(np.float32)
    x = minishare.tensor(np.array([0.5, 0.25, 2.0]))       # float64
    y = w * x
    assert y.dtype == np.float64
    y.sum().backward()
    assert w.grad.dtype == np.float32


@pytest.mark.parametrize("Optimizer", [optim.SGD, optim.AdamW, optim.LAMB])
def test_float32_parameter_stays_float32_after_a_step_on_float64_data(Optimizer):
    w = Parameter(np.ones((2, 3), dtype=np.float32))
    x = minishare.tensor(np.arange(6.0).reshape(3, 2))      # float64
    opt = Optimizer([w], lr=0.1)
    for _ in range(2):
        (w @ x).sum().backward()
        opt.step()
        opt.zero_grad()
    assert w.dtype == np.float32


# --- tensor copies, as_tensor does not ------------------------------------------------------------
def test_tensor_copies_its_data_like_torch_tensor():
    source = np.array([1.0, 2.0, 3.0])
    t = minishare.tensor(source)
    source[0] = 100.0
    assert host(t)[0] == 1.0
    on_device = dev(np.array([1.0, 2.0]))
    assert minishare.tensor(on_device).data is not on_device


def test_as_tensor_shares_the_array():
    on_device = dev(np.array([1.0, 2.0]))
    assert minishare.as_tensor(on_device).data is on_device
    assert minishare.as_tensor(on_device, dtype=np.float32).dtype == np.float32


@pytest.mark.parametrize("data", [np.array(["a", "b"]), ["a", "b"], np.array([1, "b"], dtype=object),
                                  None, np.array([b"x"])])
def test_strings_and_objects_are_refused(data):
    with pytest.raises(TypeError, match="numbers"):
        minishare.tensor(data)


# --- len and bool ---------------------------------------------------------------------------------
def test_len_of_a_0d_tensor():
    with pytest.raises(TypeError, match=r"len\(\) of a 0-d tensor"):
        len(minishare.tensor(1.0))
    assert len(minishare.tensor([[1.0, 2.0]])) == 1


def test_bool_of_tensors():
    assert bool(minishare.tensor(1.0)) is True
    assert bool(minishare.tensor(0.0)) is False
    assert bool(minishare.tensor([0.0])) is False
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(minishare.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with no values is ambiguous"):
        bool(minishare.tensor(np.zeros(0)))


# --- what the graph keeps alive -----------------------------------------------------------------
def test_an_intermediate_result_no_op_saved_is_freed_before_backward():
    """y = 2x is needed by nobody's backward (Exp saves its output, Mul its inputs): once the user
    drops y, its array is freed, as in PyTorch, and the gradient still comes out right."""
    import gc
    import weakref
    x_host = np.array([0.5, -1.0, 2.0])
    x = minishare.tensor(x_host, requires_grad=True)
    y = x * 2.0
    z = y.exp()
    freed = weakref.ref(y.data)
    del y
    gc.collect()
    assert freed() is None
    z.sum().backward()
    np.testing.assert_allclose(host(x.grad), 2 * np.exp(2 * x_host), rtol=1e-12)


def test_every_use_of_a_dropped_intermediate_reaches_the_leaf():
    """y, dropped by the user, stays in the graph for all three of its uses: d(y·y + y)/dx with
    y = 3x is (2y + 1)·3."""
    x_host = np.array([1.0, -2.0])
    x = minishare.tensor(x_host, requires_grad=True)
    y = x * 3.0
    out = y * y + y
    del y
    out.sum().backward()
    np.testing.assert_allclose(host(x.grad), (2 * 3 * x_host + 1) * 3, rtol=1e-12)
