"""minishare.nn: Module bookkeeping with shared sub-modules, modes, gradients, state dicts,
initializers and the basic layers."""
import math

import numpy as np
import pytest

import minishare
from minishare import backend, nn
from minishare.models.initialization import bert_init_
from conftest import check, const, grad_of, host, leaf, randn


class Shared(nn.Module):
    """One Linear used at two places (ALBERT-style sharing), next to an unshared one."""

    def __init__(self):
        super().__init__()
        self.first = nn.Linear(3, 3)
        self.second = self.first                 # the same module under a second name
        self.head = nn.Linear(3, 2, bias=False)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.head(self.drop(self.second(self.first(x).tanh())))


def test_parameters_deduplicate_a_shared_module():
    model = Shared()
    params = list(model.parameters())
    assert len(params) == 3                                        # first.weight, first.bias, head.weight
    assert len({id(p) for p in params}) == 3
    assert [n for n, _ in model.named_parameters()] == ["first.weight", "first.bias", "head.weight"]


def test_every_name_of_a_shared_parameter():
    model = Shared()
    names = [n for n, _ in model.named_parameters(remove_duplicate=False)]
    assert names == ["first.weight", "first.bias", "second.weight", "second.bias", "head.weight"]
    assert dict(model.shared_names()) == {"first.weight": ["first.weight", "second.weight"],
                                          "first.bias": ["first.bias", "second.bias"]}


def test_the_same_parameter_assigned_twice_is_one_parameter():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(5, 3)
            self.out = nn.Linear(3, 5, bias=False)
            self.out.weight = self.emb.weight     # tied input and output embeddings
    model = Tied()
    assert len(list(model.parameters())) == 1
    assert dict(model.shared_names()) == {"emb.weight": ["emb.weight", "out.weight"]}


def test_children_and_modules():
    model = Shared()
    assert list(model.children()) == [model.first, model.second, model.head, model.drop]
    assert [n for n, _ in model.named_children()] == ["first", "second", "head", "drop"]
    modules = list(model.modules())
    assert modules == [model, model.first, model.head, model.drop]          # shared module once
    assert [n for n, _ in model.named_modules()] == ["", "first", "head", "drop"]


def test_module_list_holding_one_module_twice():
    layer = nn.Linear(2, 2)
    stack = nn.ModuleList([layer, layer, nn.Linear(2, 2)])
    assert len(stack) == 3 and stack[1] is layer and list(stack)[0] is layer
    assert len(list(stack.parameters())) == 4
    assert list(stack.shared_names()) == ["0.weight", "0.bias"]


def test_sequential_applies_in_order():
    a, b = nn.Linear(3, 4), nn.Linear(4, 2)
    x_host = randn(5, 3)
    x = minishare.tensor(x_host.astype(np.float32))
    W1, b1, W2, b2 = (host(p) for p in (a.weight, a.bias, b.weight, b.bias))
    np.testing.assert_allclose(host(nn.Sequential(a, b)(x)), (x_host @ W1.T + b1) @ W2.T + b2, rtol=1e-5, atol=1e-6)


def test_module_must_call_super_init():
    class Broken(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(np.ones(2))
    with pytest.raises(AttributeError, match=r"super\(\).__init__\(\)"):
        Broken()


def test_reassigning_an_attribute_unregisters_it():
    model = Shared()
    model.head = None
    assert [n for n, _ in model.named_parameters()] == ["first.weight", "first.bias"]


# --- modes and gradients ----------------------------------------------------------------------------
def test_train_and_eval_propagate():
    model = Shared()
    assert all(m.training for m in model.modules())
    assert model.eval() is model
    assert not any(m.training for m in model.modules())
    x = minishare.tensor(randn(4, 3).astype(np.float32))
    assert model.drop(x) is x                                # identity in eval mode
    np.testing.assert_array_equal(host(model(x)), host(model(x)))
    model.train()
    assert all(m.training for m in model.modules())
    minishare.manual_seed(0)
    assert np.any(host(model.drop(minishare.tensor(np.ones((8, 8), dtype=np.float32)))) == 0)


def test_dropout_layer_rejects_bad_p():
    with pytest.raises(ValueError, match=r"p must lie in \[0, 1\], got 2"):
        nn.Dropout(2)


def test_zero_grad():
    model = Shared()
    model(minishare.tensor(randn(4, 3).astype(np.float32))).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_shared_module_gradient_sums_both_uses():
    """Gradcheck of the whole model in float64: the shared Linear's gradient is the sum over its
    two uses, which finite differences see directly."""
    model = Shared().eval().double()
    assert all(p.dtype == np.float64 for p in model.parameters())
    assert model.second.weight is model.first.weight                 # double() keeps sharing
    x = const(randn(4, 3))
    params = list(model.parameters())
    check(lambda *ps: model(x), *params, names=[n for n, _ in model.named_parameters()])


def test_shared_linear_gradient_by_hand():
    """y = W(W x): dL/dW for L = Σ y collects a term from each use."""
    lin = nn.Linear(2, 2, bias=False).double()
    W = host(lin.weight)
    x_host = randn(3, 2)
    lin(lin(leaf(x_host, requires_grad=False))).sum().backward()
    h = x_host @ W.T
    outer_use = np.ones((3, 2)).T @ h              # dL/dW through the second application
    inner_use = (np.ones((3, 2)) @ W).T @ x_host   # through the first one
    np.testing.assert_allclose(grad_of(lin.weight), outer_use + inner_use, rtol=1e-12)


# --- state dicts ------------------------------------------------------------------------------------
def test_state_dict_round_trip_through_host():
    a, b = Shared(), Shared()
    minishare.manual_seed(1)
    bert_init_(b)
    state = {k: backend.to_numpy(v) for k, v in a.state_dict().items()}     # a host checkpoint
    assert list(state) == ["first.weight", "first.bias", "second.weight", "second.bias", "head.weight"]
    assert b.load_state_dict(state) is b
    for (name, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters()):
        np.testing.assert_array_equal(host(pa), host(pb), err_msg=name)
        assert pb.dtype == pa.dtype and backend.is_array(pb.data)
    assert b.second.weight is b.first.weight                                 # still shared
    x = minishare.tensor(randn(2, 3).astype(np.float32))
    np.testing.assert_array_equal(host(a.eval()(x)), host(b.eval()(x)))


def test_load_state_dict_copies():
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    state = a.state_dict()
    b.load_state_dict(state)
    b.weight.data += 1                             # must not change a
    assert not np.array_equal(host(a.weight), host(b.weight))


def test_load_state_dict_missing_key():
    state = Shared().state_dict()
    del state["head.weight"]
    with pytest.raises(RuntimeError, match="missing keys: head.weight"):
        Shared().load_state_dict(state)
    Shared().load_state_dict(state, strict=False)


def test_load_state_dict_unexpected_key():
    state = Shared().state_dict()
    state["head.bias"] = np.zeros(2, dtype=np.float32)
    with pytest.raises(RuntimeError, match="unexpected keys: head.bias"):
        Shared().load_state_dict(state)
    Shared().load_state_dict(state, strict=False)


def test_load_state_dict_shape_mismatch():
    state = {k: backend.to_numpy(v) for k, v in Shared().state_dict().items()}
    state["head.weight"] = np.zeros((3, 3), dtype=np.float32)
    for strict in (True, False):
        with pytest.raises(RuntimeError, match=r"head.weight: checkpoint \(3, 3\) vs model \(2, 3\)"):
            Shared().load_state_dict(state, strict=strict)


def test_load_state_dict_reports_every_problem():
    state = {k: backend.to_numpy(v) for k, v in Shared().state_dict().items()}
    del state["first.bias"]
    state["extra"] = np.zeros(1)
    state["head.weight"] = np.zeros(1)
    with pytest.raises(RuntimeError) as info:
        Shared().load_state_dict(state)
    for key in ("first.bias", "extra", "head.weight"):
        assert key in str(info.value)


# --- initializers -----------------------------------------------------------------------------------
def truncated_moments(mean, std, a, b):
    """Mean and standard deviation of N(mean, std²) truncated to [a, b], by the textbook formulas."""
    alpha, beta = (a - mean) / std, (b - mean) / std
    pdf = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)
    cdf = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))
    mass = cdf(beta) - cdf(alpha)
    shift = (pdf(alpha) - pdf(beta)) / mass
    var = 1 + (alpha * pdf(alpha) - beta * pdf(beta)) / mass - shift ** 2
    return mean + std * shift, std * math.sqrt(var)


def truncated_std(std, a, b):
    return truncated_moments(0.0, std, a, b)[1]


def test_trunc_normal_bounds_and_std():
    minishare.manual_seed(0)
    w = nn.Parameter(np.zeros((300, 200), dtype=np.float32))
    assert nn.init.trunc_normal_(w, std=0.02, a=-0.04, b=0.04) is w
    values = host(w)
    assert values.dtype == np.float32
    assert values.min() >= -0.04 and values.max() <= 0.04
    assert values.min() < -0.039 and values.max() > 0.039           # truncated, not shrunk
    target = truncated_std(0.02, -0.04, 0.04)                        # ≈ 0.01759
    assert abs(values.std() - target) < 0.01 * target                # 60 000 draws
    assert abs(values.mean()) < 3 * target / math.sqrt(values.size)


def test_trunc_normal_wide_and_one_sided_bounds():
    minishare.manual_seed(1)
    w = nn.init.trunc_normal_(nn.Parameter(np.zeros((200, 100))), mean=1.0, std=0.5)   # [-2, 2]
    values = host(w)
    assert values.max() <= 2.0                     # absolute bounds: 2 std above the mean
    mean, std = truncated_moments(1.0, 0.5, -2.0, 2.0)
    assert abs(values.std() - std) < 0.02 * std and abs(values.mean() - mean) < 0.01
    w = nn.init.trunc_normal_(nn.Parameter(np.zeros(1000)), std=1.0, a=0.0, b=1.0)
    assert host(w).min() >= 0.0 and host(w).max() <= 1.0


def test_trunc_normal_is_reproducible():
    minishare.manual_seed(5)
    a = host(nn.init.trunc_normal_(nn.Parameter(np.zeros(50))))
    minishare.manual_seed(5)
    np.testing.assert_array_equal(host(nn.init.trunc_normal_(nn.Parameter(np.zeros(50)))), a)


def test_bert_init():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(300, 64)
            self.lin = nn.Linear(64, 200)
            self.norm = nn.LayerNorm(64)
            self.layers = nn.ModuleList([self.lin])   # reached twice: initialized as one
    net = Net()
    net.norm.weight.data = net.norm.weight.data * 3        # spoil the LayerNorm to see it reset
    minishare.manual_seed(0)
    assert bert_init_(net, std=0.02) is net
    for weight in (net.emb.weight, net.lin.weight):
        values = host(weight)
        assert values.min() >= -0.04 and values.max() <= 0.04
        assert abs(values.std() - truncated_std(0.02, -0.04, 0.04)) < 0.02 * 0.0176
    np.testing.assert_array_equal(host(net.lin.bias), np.zeros(200))
    np.testing.assert_array_equal(host(net.norm.weight), np.ones(64))
    np.testing.assert_array_equal(host(net.norm.bias), np.zeros(64))


def test_linear_default_init_bounds():
    minishare.manual_seed(0)
    lin = nn.Linear(16, 40)
    bound = 1 / math.sqrt(16)
    for p in (lin.weight, lin.bias):
        assert np.abs(host(p)).max() <= bound and np.abs(host(p)).max() > 0.8 * bound


# --- layers -----------------------------------------------------------------------------------------
def test_layers_default_to_float32_parameters():
    for module in (nn.Linear(3, 2), nn.Embedding(4, 3), nn.LayerNorm(3)):
        for p in module.parameters():
            assert p.dtype == np.float32 and p.requires_grad and backend.is_array(p.data)
            assert "Parameter(shape=" in repr(p)


def test_layer_forwards_match_formulas():
    lin, emb, norm = nn.Linear(3, 2), nn.Embedding(4, 3), nn.LayerNorm(3)
    x_host = randn(2, 3).astype(np.float32)
    W, b = host(lin.weight), host(lin.bias)
    np.testing.assert_allclose(host(lin(minishare.tensor(x_host))), x_host @ W.T + b, rtol=1e-5, atol=1e-6)
    ids = np.array([[3, 0], [3, 3]])
    np.testing.assert_array_equal(host(emb(const(ids))), host(emb.weight)[ids])
    y = host(norm(minishare.tensor(x_host)))
    mu, var = x_host.mean(-1, keepdims=True), x_host.var(-1, keepdims=True)
    np.testing.assert_allclose(y, (x_host - mu) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-5)


def test_module_repr_lists_children():
    text = repr(Shared())
    assert "(first): Linear(in_features=3, out_features=3, bias=True)" in text
    assert "(drop): Dropout(p=0.5)" in text
