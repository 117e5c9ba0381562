"""Tests for minishare.optim. Every expected value is worked out here, independently of the code
under test: the update rules written out in plain NumPy (float64), closed forms for special cases,
finite differences, and schedule formulas evaluated by hand."""
import math
import re

import numpy as np
import pytest
from conftest import dev, host

import minishare
from minishare import functional as F, nn, optim

# --- the update rules, written out in NumPy from the papers ----------------------------------------


def reference_sgd(p, grads, lr, momentum=0.0, weight_decay=0.0, nesterov=False):
    """PyTorch's SGD: g ← g + λp; b₁ = g₁, b ← μb + g; p ← p − lr·b
    (Nesterov: p ← p − lr·(g + μb))."""
    b = None
    for g in grads:
        g = g + weight_decay * p
        if momentum:
            b = g if b is None else momentum * b + g
            g = g + momentum * b if nesterov else b
        p = p - lr * g
    return p


def reference_adam(p, grads, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled=False):
    """Kingma & Ba's Adam with bias correction; L2 decay through the gradient (Adam) or decoupled
    decay p ← p − lr·λ·p (AdamW, Loshchilov & Hutter)."""
    beta1, beta2 = betas
    m = v = np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        if not decoupled:
            g = g + weight_decay * p
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g ** 2
        m_hat, v_hat = m / (1 - beta1 ** t), v / (1 - beta2 ** t)
        if decoupled:
            p = p - lr * weight_decay * p
        p = p - lr * m_hat / (np.sqrt(v_hat) + eps)
    return p


def reference_lamb(p, grads, lr, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.01):
    """You et al. (2020), Algorithm 2, per tensor: u = m̂/(√v̂+ε) + λp, r = ‖p‖/‖u‖, p ← p − lr·r·u."""
    beta1, beta2 = betas
    m = v = np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g ** 2
        m_hat, v_hat = m / (1 - beta1 ** t), v / (1 - beta2 ** t)
        u = m_hat / (np.sqrt(v_hat) + eps) + weight_decay * p
        p_norm, u_norm = np.sqrt((p ** 2).sum()), np.sqrt((u ** 2).sum())
        r = p_norm / u_norm if p_norm > 0 and u_norm > 0 else 1.0
        p = p - lr * r * u
    return p


# (name, build the optimizer from params, the same rule in NumPy: (p0, grads) -> p)
CASES = [
    ("sgd", lambda ps: optim.SGD(ps, lr=0.1),
     lambda p, gs: reference_sgd(p, gs, lr=0.1)),
    ("sgd-weight-decay", lambda ps: optim.SGD(ps, lr=0.1, weight_decay=0.05),
     lambda p, gs: reference_sgd(p, gs, lr=0.1, weight_decay=0.05)),
    ("sgd-momentum", lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.05),
     lambda p, gs: reference_sgd(p, gs, lr=0.1, momentum=0.9, weight_decay=0.05)),
    ("sgd-nesterov", lambda ps: optim.SGD(ps, lr=0.1, momentum=0.8, nesterov=True),
     lambda p, gs: reference_sgd(p, gs, lr=0.1, momentum=0.8, nesterov=True)),
    ("adam", lambda ps: optim.Adam(ps, lr=0.01, betas=(0.8, 0.95)),
     lambda p, gs: reference_adam(p, gs, lr=0.01, betas=(0.8, 0.95))),
    ("adam-l2", lambda ps: optim.Adam(ps, lr=0.01, weight_decay=0.1),
     lambda p, gs: reference_adam(p, gs, lr=0.01, weight_decay=0.1)),
    ("adamw", lambda ps: optim.AdamW(ps, lr=0.01, weight_decay=0.1),
     lambda p, gs: reference_adam(p, gs, lr=0.01, weight_decay=0.1, decoupled=True)),
    ("lamb", lambda ps: optim.LAMB(ps, lr=0.05, weight_decay=0.1),
     lambda p, gs: reference_lamb(p, gs, lr=0.05, weight_decay=0.1)),
]
CASE_IDS = [name for name, _, _ in CASES]

rng = np.random.default_rng(0)
P0 = rng.standard_normal((2, 3))
GRADS = [rng.standard_normal((2, 3)) for _ in range(3)]


def run(make, p0, grads):
    """Step a fresh float64 Parameter through fixed gradients; return it (on the host) and the
    optimizer."""
    p = nn.Parameter(dev(p0))
    optimizer = make([p])
    for g in grads:
        p.grad = dev(g)
        optimizer.step()
    return host(p.data), optimizer


# --- single-tensor updates against the rules written out -----------------------------------------


@pytest.mark.parametrize("name, make, reference", CASES, ids=CASE_IDS)
def test_three_steps_match_the_rule_written_out(name, make, reference):
    for n_steps in (1, 2, 3):
        p, _ = run(make, P0, GRADS[:n_steps])
        np.testing.assert_allclose(p, reference(P0, GRADS[:n_steps]), rtol=1e-12, atol=1e-14)


def test_sgd_momentum_closed_form():
    # Without decay, b_t = Σ_{k<=t} μ^(t-k) g_k, so three steps move p by
    # lr·(g1 + (μ g1 + g2) + (μ² g1 + μ g2 + g3)).
    lr, mu = 0.1, 0.9
    g1, g2, g3 = GRADS
    p, _ = run(lambda ps: optim.SGD(ps, lr=lr, momentum=mu), P0, GRADS)
    expected = P0 - lr * ((1 + mu + mu ** 2) * g1 + (1 + mu) * g2 + g3)
    np.testing.assert_allclose(p, expected, rtol=1e-12)


def test_sgd_nesterov_closed_form():
    # step 1: b = g1, p -= lr (g1 + μ g1);  step 2: b = μ g1 + g2, p -= lr (g2 + μ (μ g1 + g2))
    lr, mu = 0.1, 0.8
    g1, g2 = GRADS[:2]
    p, _ = run(lambda ps: optim.SGD(ps, lr=lr, momentum=mu, nesterov=True), P0, GRADS[:2])
    expected = P0 - lr * (1 + mu) * g1 - lr * (g2 + mu * (mu * g1 + g2))
    np.testing.assert_allclose(p, expected, rtol=1e-12)


def test_adam_bias_correction_makes_a_constant_gradient_move_lr_per_step():
    # With g constant, m_t = (1 − β₁ᵗ) g and v_t = (1 − β₂ᵗ) g², so m̂ = g and v̂ = g² exactly:
    # every step moves each coordinate by lr · g / (|g| + ε), about lr · sign(g).
    lr, eps, g = 0.01, 1e-8, GRADS[0]
    p, _ = run(lambda ps: optim.Adam(ps, lr=lr, eps=eps), P0, [g] * 3)
    np.testing.assert_allclose(p, P0 - 3 * lr * g / (np.abs(g) + eps), rtol=1e-12)


def test_adamw_constant_gradient_closed_form():
    # p_t = a p_{t-1} − lr s with a = 1 − lr λ and s = g/(|g| + ε) (as above), so
    # p_3 = a³ p_0 − lr s (1 + a + a²).
    lr, wd, eps, g = 0.01, 0.1, 1e-8, GRADS[0]
    a, s = 1 - lr * wd, g / (np.abs(g) + eps)
    p, _ = run(lambda ps: optim.AdamW(ps, lr=lr, weight_decay=wd, eps=eps), P0, [g] * 3)
    np.testing.assert_allclose(p, a ** 3 * P0 - lr * s * (1 + a + a ** 2), rtol=1e-12)


def test_lamb_moves_each_tensor_by_lr_times_its_norm():
    # Without decay and with a constant gradient, u = g/(|g| + ε) every step, and the trust ratio
    # makes the step −lr ‖p‖ u/‖u‖: its length is lr times the tensor's norm before the step.
    lr, g = 0.05, GRADS[0]
    u = g / (np.abs(g) + 1e-6)
    p = P0
    for n_steps in (1, 2, 3):
        expected = p - lr * np.linalg.norm(p) * u / np.linalg.norm(u)
        p, _ = run(lambda ps: optim.LAMB(ps, lr=lr, weight_decay=0.0), P0, [g] * n_steps)
        np.testing.assert_allclose(p, expected, rtol=1e-12)


def test_lamb_trust_ratio_is_one_where_a_norm_is_zero():
    lr, g = 0.05, GRADS[0]
    zero = np.zeros_like(P0)
    p, _ = run(lambda ps: optim.LAMB(ps, lr=lr), zero, [g])        # ‖p‖ = 0: a plain Adam step
    np.testing.assert_allclose(p, -lr * g / (np.abs(g) + 1e-6), rtol=1e-12)
    p, _ = run(lambda ps: optim.LAMB(ps, lr=lr), zero, [zero])     # ‖u‖ = 0 too: no NaN, no move
    np.testing.assert_array_equal(p, zero)


def test_parameter_groups_override_the_defaults():
    # BERT-style groups: decay for the matrix, none for the bias, and a group-specific lr.
    w, b = nn.Parameter(dev(P0)), nn.Parameter(dev(P0[0]))
    optimizer = optim.AdamW([{"params": [w]}, {"params": [b], "weight_decay": 0.0, "lr": 0.02}],
                            lr=0.01, weight_decay=0.1)
    for g in GRADS:
        w.grad, b.grad = dev(g), dev(g[0])
        optimizer.step()
    gb = [g[0] for g in GRADS]
    np.testing.assert_allclose(host(w.data), reference_adam(P0, GRADS, lr=0.01, weight_decay=0.1,
                                                            decoupled=True), rtol=1e-12)
    np.testing.assert_allclose(host(b.data), reference_adam(P0[0], gb, lr=0.02), rtol=1e-12)


def test_step_skips_parameters_without_gradient_and_zero_grad_clears():
    used, unused = nn.Parameter(dev(P0)), nn.Parameter(dev(P0 + 1))
    optimizer = optim.Adam([used, unused], lr=0.01)
    used.grad = dev(GRADS[0])
    optimizer.step()
    np.testing.assert_array_equal(host(unused.data), P0 + 1)
    assert unused not in optimizer.state and used in optimizer.state
    optimizer.zero_grad()
    assert used.grad is None and unused.grad is None


def test_step_does_not_write_into_the_users_array():
    p0 = P0.copy()
    p = nn.Parameter(p0)          # on NumPy, Parameter keeps this very array
    p.grad = dev(GRADS[0])
    optim.SGD([p], lr=0.1).step()
    np.testing.assert_array_equal(p0, P0)


# --- parameter sharing ---------------------------------------------------------------------------


class TwoDepths(nn.Module):
    """y = second(tanh(first(x))); ``first`` and ``second`` may be one Linear (shared) or two."""

    def __init__(self, first, second):
        super().__init__()
        self.layers = nn.ModuleList([first, second])

    def forward(self, x):
        return self.layers[1](F.tanh(self.layers[0](x)))


X = rng.standard_normal((5, 3))
TARGET = rng.standard_normal((5, 3))


def mse(model):
    """The loss mean((y − TARGET)²), evaluated on the host in float64."""
    return ((host(model(minishare.tensor(X))) - TARGET) ** 2).mean()


def backward_mse(model):
    """Backpropagate the loss from its gradient 2 (y − TARGET)/size, the seed worked out here."""
    y = model(minishare.tensor(X))
    y.backward(dev(2 * (host(y) - TARGET) / TARGET.size))


def shared_model():
    minishare.manual_seed(0)
    lin = nn.Linear(3, 3).double()
    return TwoDepths(lin, lin), lin


def test_shared_weight_gradient_is_the_sum_of_both_uses():
    model, lin = shared_model()
    backward_mse(model)

    # The same function with two separate copies holding the same values.
    copies = [nn.Linear(3, 3).double() for _ in range(2)]
    for c in copies:
        c.weight.data, c.bias.data = dev(host(lin.weight.data)), dev(host(lin.bias.data))
    backward_mse(TwoDepths(*copies))
    for name in ("weight", "bias"):
        expected = host(getattr(copies[0], name).grad) + host(getattr(copies[1], name).grad)
        np.testing.assert_allclose(host(getattr(lin, name).grad), expected, rtol=1e-12)

    # And central differences of the loss in the shared weight.
    w0, h = host(lin.weight.data), 1e-6
    numeric = np.zeros_like(w0)
    with minishare.no_grad():
        for i in np.ndindex(w0.shape):
            bump = np.zeros_like(w0)
            bump[i] = h
            lin.weight.data = dev(w0 + bump)
            up = mse(model)
            lin.weight.data = dev(w0 - bump)
            numeric[i] = (up - mse(model)) / (2 * h)
    np.testing.assert_allclose(host(lin.weight.grad), numeric, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name, make, reference", CASES, ids=CASE_IDS)
def test_shared_tensor_is_stepped_once_per_step(name, make, reference):
    model, lin = shared_model()
    every_use = [p for _, p in model.named_parameters(remove_duplicate=False)]
    assert len(every_use) == 4                       # weight and bias, each under two names
    optimizer = make(every_use)
    assert len(optimizer.param_groups[0]["params"]) == 2

    start = {"weight": host(lin.weight.data), "bias": host(lin.bias.data)}
    grads = {"weight": [], "bias": []}
    for _ in range(2):
        optimizer.zero_grad()
        backward_mse(model)
        grads["weight"].append(host(lin.weight.grad))
        grads["bias"].append(host(lin.bias.grad))
        optimizer.step()

    assert len(optimizer.state) == 2                 # one state per distinct tensor
    for key in ("weight", "bias"):
        expected = reference(start[key], grads[key])  # one update per step from the summed gradient
        np.testing.assert_allclose(host(getattr(lin, key).data), expected, rtol=1e-10, atol=1e-14)


def test_parameter_listed_twice_is_stepped_once():
    p = nn.Parameter(dev(P0))
    optimizer = optim.SGD([p, p], lr=0.1)
    p.grad = dev(GRADS[0])
    optimizer.step()
    np.testing.assert_allclose(host(p.data), P0 - 0.1 * GRADS[0], rtol=1e-12)


def test_parameter_in_two_groups_is_kept_once_or_refused():
    p, q = nn.Parameter(dev(P0)), nn.Parameter(dev(P0))
    optimizer = optim.SGD([{"params": [p, q]}, {"params": [q], "lr": 0.1}], lr=0.1)
    assert [len(g["params"]) for g in optimizer.param_groups] == [2, 0]
    q.grad = dev(GRADS[0])
    optimizer.step()
    np.testing.assert_allclose(host(q.data), P0 - 0.1 * GRADS[0], rtol=1e-12)
    with pytest.raises(ValueError, match="different settings.*lr"):
        optim.SGD([{"params": [p]}, {"params": [p], "lr": 0.5}], lr=0.1)


def test_clip_grad_norm_counts_a_shared_tensor_once():
    assert optim.clip_grad_norm_ is nn.utils.clip_grad_norm_
    model, lin = shared_model()
    backward_mse(model)
    gw, gb = host(lin.weight.grad), host(lin.bias.grad)
    total = math.sqrt((gw ** 2).sum() + (gb ** 2).sum())
    every_use = [p for _, p in model.named_parameters(remove_duplicate=False)]

    assert optim.clip_grad_norm_(every_use, max_norm=1e6).item() == pytest.approx(total, rel=1e-12)
    assert optim.clip_grad_norm_(every_use, max_norm=total / 4).item() == pytest.approx(total, rel=1e-12)
    np.testing.assert_allclose(host(lin.weight.grad), gw / 4, rtol=1e-5)
    np.testing.assert_allclose(host(lin.bias.grad), gb / 4, rtol=1e-5)


# --- training a tiny MLP -------------------------------------------------------------------------


class MLP(nn.Module):
    """2-16-2 with tanh: two logits for a binary label."""

    def __init__(self):
        super().__init__()
        self.hidden, self.out = nn.Linear(2, 16), nn.Linear(16, 2)

    def forward(self, x):
        return self.out(F.tanh(self.hidden(x)))


def xor_data():
    """64 points of [-1, 1]², none within 0.1 of an axis; label 1 where x₁x₂ > 0 (XOR of signs)."""
    points = np.random.default_rng(0).uniform(-1, 1, (256, 2))
    points = points[(np.abs(points) > 0.1).all(axis=1)][:64]
    labels = (points.prod(axis=1) > 0).astype(np.int64)
    return minishare.tensor(points.astype(np.float32)), minishare.tensor(labels)


def train(model, optimizer, steps, scheduler=None):
    x, y = xor_data()
    losses = []
    for _ in range(steps):
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        losses.append(loss.item())
    return losses


# Learning rates picked by hand. Over initialization seeds 0-5, 300 steps go from about
# ln 2 = 0.69 to 0.012-0.016 (the SGD variants), 0.0009-0.002 (Adam, AdamW) and 0.0006-0.0015
# (LAMB): the threshold 0.05 leaves a margin of 3x and more.
TRAINING = [
    ("sgd", lambda ps: optim.SGD(ps, lr=1.0)),
    ("sgd-momentum", lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9)),
    ("sgd-nesterov", lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)),
    ("adam", lambda ps: optim.Adam(ps, lr=0.03)),
    ("adamw", lambda ps: optim.AdamW(ps, lr=0.03)),
    ("lamb", lambda ps: optim.LAMB(ps, lr=0.02)),
]


@pytest.mark.parametrize("name, make", TRAINING, ids=[name for name, _ in TRAINING])
def test_tiny_mlp_learns_xor(name, make):
    minishare.manual_seed(0)
    model = MLP()
    losses = train(model, make(model.parameters()), steps=300)
    assert losses[0] > 0.6
    assert losses[-1] < 0.05


# --- saving and resuming -------------------------------------------------------------------------


def to_host(optimizer_state):
    """An optimizer state_dict as it would be written to disk: host NumPy arrays."""
    return {"state": {i: {k: v if isinstance(v, (int, float)) else host(v) for k, v in s.items()}
                      for i, s in optimizer_state["state"].items()},
            "param_groups": [dict(g) for g in optimizer_state["param_groups"]]}


RESUMING = [
    ("sgd-momentum", lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9)),
    ("adam", lambda ps: optim.Adam(ps, lr=0.03, weight_decay=1e-3)),
    ("adamw", lambda ps: optim.AdamW(ps, lr=0.03)),
    ("lamb", lambda ps: optim.LAMB(ps, lr=0.02)),
]


@pytest.mark.parametrize("name, make", RESUMING, ids=[name for name, _ in RESUMING])
def test_resuming_from_state_dicts_continues_identically(name, make):
    def start():
        model = MLP()
        optimizer = make(model.parameters())
        return model, optimizer, optim.linear_warmup_decay(optimizer, 3, 20)

    minishare.manual_seed(0)
    model_a, optimizer_a, scheduler_a = start()
    train(model_a, optimizer_a, 10, scheduler_a)

    minishare.manual_seed(0)
    model_b, optimizer_b, scheduler_b = start()
    train(model_b, optimizer_b, 5, scheduler_b)
    saved = ({k: host(v) for k, v in model_b.state_dict().items()},
             to_host(optimizer_b.state_dict()), scheduler_b.state_dict())

    minishare.manual_seed(1)                      # a different initialization, overwritten below
    model_c, optimizer_c, scheduler_c = start()
    model_c.load_state_dict(saved[0])
    optimizer_c.load_state_dict(saved[1])
    scheduler_c.load_state_dict(saved[2])
    train(model_c, optimizer_c, 5, scheduler_c)

    for (key, a), (_, c) in zip(model_a.state_dict().items(), model_c.state_dict().items()):
        np.testing.assert_array_equal(host(c), host(a), err_msg=key)

    # Without the optimizer's state the same five steps land elsewhere: the state matters.
    model_d, optimizer_d, scheduler_d = start()
    model_d.load_state_dict(saved[0])
    scheduler_d.load_state_dict(saved[2])
    train(model_d, optimizer_d, 5, scheduler_d)
    assert not np.allclose(host(model_d.hidden.weight.data), host(model_a.hidden.weight.data))


def test_state_dict_is_a_snapshot_that_later_steps_leave_alone():
    p = nn.Parameter(dev(P0))
    optimizer = optim.Adam([p], lr=0.01)
    p.grad = dev(GRADS[0])
    optimizer.step()
    snapshot = optimizer.state_dict()
    before = to_host(snapshot)
    p.grad = dev(GRADS[1])
    optimizer.step()
    assert snapshot["state"][0]["step"] == before["state"][0]["step"] == 1
    for key in ("exp_avg", "exp_avg_sq"):
        np.testing.assert_array_equal(host(snapshot["state"][0][key]), before["state"][0][key])


def test_load_state_dict_restores_hyperparameters_and_refuses_mismatches():
    p, q = nn.Parameter(dev(P0)), nn.Parameter(dev(P0[0]))
    source = optim.Adam([{"params": [p]}, {"params": [q], "lr": 0.5}], lr=0.01)
    p.grad, q.grad = dev(GRADS[0]), dev(GRADS[0][0])
    source.step()
    saved = to_host(source.state_dict())

    target = optim.Adam([{"params": [p]}, {"params": [q]}], lr=0.3)
    target.load_state_dict(saved)
    assert [g["lr"] for g in target.param_groups] == [0.01, 0.5]
    assert target.state[q]["step"] == 1

    with pytest.raises(ValueError, match=re.escape("has 2 parameter group(s), this optimizer 1")):
        optim.Adam([p, q], lr=0.01).load_state_dict(saved)
    one_parameter = to_host(optim.Adam([p], lr=0.01).state_dict())
    with pytest.raises(ValueError, match=re.escape("group 0 has 1 parameter(s) in the state_dict and 2")):
        optim.Adam([p, q], lr=0.01).load_state_dict(one_parameter)
    with pytest.raises(ValueError, match="shape"):     # p's moments offered to q
        optim.Adam([{"params": [q]}, {"params": [p]}], lr=0.01).load_state_dict(saved)
    with pytest.raises(ValueError, match="different optimizer"):
        optim.SGD([{"params": [p]}, {"params": [q]}], lr=0.1).load_state_dict(saved)


# --- learning-rate schedules ---------------------------------------------------------------------


def schedule_values(make_scheduler, peak, steps):
    """The lr that each of the first ``steps`` optimizer steps would use."""
    optimizer = optim.SGD([nn.Parameter(dev(P0))], lr=peak)
    scheduler = make_scheduler(optimizer)
    values = []
    for _ in range(steps):
        values.append(optimizer.param_groups[0]["lr"])
        assert scheduler.get_last_lr() == [values[-1]]
        scheduler.step()
    return values


def test_linear_warmup_decay_values():
    peak, W, T = 0.5, 10, 100
    lrs = schedule_values(lambda o: optim.linear_warmup_decay(o, W, T), peak, 120)
    assert lrs[0] == 0.0                                       # warm-up starts at 0 ...
    assert all(a < b for a, b in zip(lrs[:W], lrs[1:W + 1]))   # ... rises ...
    assert lrs[W] == pytest.approx(peak) and max(lrs) == pytest.approx(peak)   # ... to the peak
    assert lrs[4] == pytest.approx(peak * 4 / 10)
    assert lrs[55] == pytest.approx(peak * 45 / 90)            # halfway down the decay
    assert lrs[99] == pytest.approx(peak * 1 / 90)
    assert lrs[100] == 0.0 and lrs[119] == 0.0


def test_cosine_warmup_decay_values():
    peak, W, T, rho = 0.5, 10, 110, 0.1
    lrs = schedule_values(lambda o: optim.cosine_warmup_decay(o, W, T, min_ratio=rho), peak, 130)
    assert lrs[0] == 0.0 and lrs[5] == pytest.approx(peak / 2)
    assert lrs[W] == pytest.approx(peak) and max(lrs) == pytest.approx(peak)
    assert lrs[35] == pytest.approx(peak * (rho + (1 - rho) * (1 + math.cos(math.pi / 4)) / 2))
    assert lrs[60] == pytest.approx(peak * (rho + (1 - rho) / 2))        # halfway: the midpoint
    assert lrs[T] == pytest.approx(peak * rho) and lrs[129] == pytest.approx(peak * rho)
    no_warmup = schedule_values(lambda o: optim.cosine_warmup_decay(o, 0, 4), 1.0, 5)
    cos = math.cos
    assert no_warmup == pytest.approx([1.0, (1 + cos(math.pi / 4)) / 2, 0.5, (1 + cos(3 * math.pi / 4)) / 2, 0])


def test_lambda_lr_scales_every_groups_initial_lr():
    p, q = nn.Parameter(dev(P0)), nn.Parameter(dev(P0))
    optimizer = optim.SGD([{"params": [p]}, {"params": [q], "lr": 0.2}], lr=0.1)
    scheduler = optim.LambdaLR(optimizer, lambda t: 0.5 ** t)
    assert scheduler.get_last_lr() == [0.1, 0.2]                # factor(0) = 1 applied at once
    scheduler.step()
    scheduler.step()
    assert [g["lr"] for g in optimizer.param_groups] == pytest.approx([0.025, 0.05])


def test_scheduler_state_dict_round_trip():
    def build():
        optimizer = optim.AdamW([nn.Parameter(dev(P0))], lr=0.3)
        return optimizer, optim.cosine_warmup_decay(optimizer, 5, 50)

    optimizer_a, scheduler_a = build()
    for _ in range(7):
        scheduler_a.step()
    optimizer_b, scheduler_b = build()
    scheduler_b.load_state_dict(scheduler_a.state_dict())
    assert scheduler_b.last_epoch == 7
    assert optimizer_b.param_groups[0]["lr"] == optimizer_a.param_groups[0]["lr"]
    for _ in range(10):
        scheduler_a.step()
        scheduler_b.step()
        assert scheduler_b.get_last_lr() == scheduler_a.get_last_lr()


@pytest.mark.parametrize("args, message", [
    ((10, 5), "num_warmup_steps (10) exceeds num_training_steps (5)"),
    ((-1, 5), "num_warmup_steps must be a whole number >= 0, got -1"),
    ((0, 0), "num_training_steps must be at least 1"),
    ((2.5, 10), "num_warmup_steps must be a whole number >= 0, got 2.5"),
])
def test_schedule_arguments_are_checked(args, message):
    optimizer = optim.SGD([nn.Parameter(dev(P0))], lr=0.1)
    for factory in (optim.linear_warmup_decay, optim.cosine_warmup_decay):
        with pytest.raises(ValueError, match=re.escape(message)):
            factory(optimizer, *args)


def test_scheduler_errors():
    optimizer = optim.SGD([nn.Parameter(dev(P0))], lr=0.1)
    with pytest.raises(ValueError, match=re.escape("min_ratio must be a number in [0, 1], got 1.5")):
        optim.cosine_warmup_decay(optimizer, 1, 10, min_ratio=1.5)
    with pytest.raises(TypeError, match="lr_lambda must be a function"):
        optim.LambdaLR(optimizer, 0.5)
    with pytest.raises(ValueError, match=re.escape("lr_lambda(0) returned -1")):
        optim.LambdaLR(optimizer, lambda t: -1)


# --- bad input -----------------------------------------------------------------------------------

BAD_HYPERPARAMETERS = [
    (lambda ps: optim.SGD(ps, lr=-0.1), "lr must be a number >= 0.0, got -0.1"),
    (lambda ps: optim.SGD(ps, lr=float("nan")), "lr must be a number >= 0.0, got nan"),
    (lambda ps: optim.SGD(ps, lr="0.1"), "lr must be a number >= 0.0, got '0.1'"),
    (lambda ps: optim.SGD(ps, lr=0.1, momentum=-0.5), "momentum must be a number in [0.0, 1.0), got -0.5"),
    (lambda ps: optim.SGD(ps, lr=0.1, momentum=1.0), "momentum must be a number in [0.0, 1.0), got 1.0"),
    (lambda ps: optim.SGD(ps, lr=0.1, weight_decay=-1), "weight_decay must be a number >= 0.0, got -1"),
    (lambda ps: optim.SGD(ps, lr=0.1, nesterov=True), "nesterov=True needs momentum > 0"),
    (lambda ps: optim.Adam(ps, lr=-1e-3), "Adam: lr must be a number >= 0.0, got -0.001"),
    (lambda ps: optim.Adam(ps, betas=(1.0, 0.999)), "betas[0] must be a number in [0.0, 1.0), got 1.0"),
    (lambda ps: optim.Adam(ps, betas=(0.9, -0.1)), "betas[1] must be a number in [0.0, 1.0), got -0.1"),
    (lambda ps: optim.Adam(ps, betas=0.9), "betas must be a pair (beta1, beta2), got 0.9"),
    (lambda ps: optim.Adam(ps, eps=-1e-8), "eps must be a number >= 0.0, got -1e-08"),
    (lambda ps: optim.AdamW(ps, weight_decay=-0.01), "AdamW: weight_decay must be a number >= 0.0, got -0.01"),
    (lambda ps: optim.LAMB(ps, betas=(0.9, 1.5)), "LAMB: betas[1] must be a number in [0.0, 1.0), got 1.5"),
    (lambda ps: optim.LAMB(ps, eps=-1.0), "LAMB: eps must be a number >= 0.0, got -1.0"),
    (lambda ps: optim.SGD([{"params": ps, "lr": -2.0}], lr=0.1),
     "SGD, parameter group 0: lr must be a number >= 0.0, got -2.0"),
    (lambda ps: optim.AdamW([{"params": ps, "weight_deacy": 0.0}]), "unknown hyperparameter(s) ['weight_deacy']"),
]


@pytest.mark.parametrize("make, message", BAD_HYPERPARAMETERS, ids=[m for _, m in BAD_HYPERPARAMETERS])
def test_bad_hyperparameters_are_named(make, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        make([nn.Parameter(dev(P0))])


def test_bad_params_are_refused():
    p = nn.Parameter(dev(P0))
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.Adam(nn.Dropout(0.1).parameters())          # a module without parameters
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([{"params": []}, {"params": [], "lr": 0.5}], lr=0.1)
    optimizer = optim.AdamW([{"params": [p]}, {"params": [], "weight_decay": 0.0}])   # allowed
    assert [len(g["params"]) for g in optimizer.param_groups] == [1, 0]
    with pytest.raises(TypeError, match=re.escape("wrap it: nn.Parameter(tensor)")):
        optim.SGD([minishare.tensor(P0, requires_grad=True)], lr=0.1)
    with pytest.raises(TypeError, match="holds a ndarray"):
        optim.SGD([dev(P0)], lr=0.1)
    with pytest.raises(ValueError, match="requires_grad=False"):
        optim.SGD([nn.Parameter(dev(P0), requires_grad=False)], lr=0.1)
    with pytest.raises(TypeError, match=re.escape("model.parameters()")):
        optim.SGD(nn.Linear(2, 2), lr=0.1)
    with pytest.raises(TypeError, match="single Parameter"):
        optim.SGD(p, lr=0.1)
    with pytest.raises(TypeError, match="mixes Parameters and parameter-group dicts"):
        optim.SGD([p, {"params": [nn.Parameter(dev(P0))]}], lr=0.1)
