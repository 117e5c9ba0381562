"""Cases of exercise 13: the signal against math.sin/cos evaluated entry by entry in
Tensor2Tensor's layout, the encoder against a NumPy reimplementation of its one Post-LN layer run
``steps`` times (and its gradients against finite differences of that reimplementation), and ACT
on hand-worked halting sequences.

Each probe calls ``universal`` (the student's module), on inputs the grader draws (``given``) in the
random cases, and returns arrays and numbers; the judges, run by the grader, check them against
what this file computes itself. The NumPy signal and encoder are tasks 1 and 2's answers, so they
sit with the hidden cases, which the release leaves out: a visible case compares with hand-worked
values or with the reference solution (``ref``)."""
import math

import numpy as np

import minishare
from minishare.grader.cases import case, raises


# --------------------------------------------------------------------------- task 1: the signal
@case("ex13_task1")
def test_signal_at_the_origin(universal):
    return universal.timestep_signal(0, 1, 4)


@test_signal_at_the_origin.judge
def _(out, ref):
    # position 0, step 0: every sine is 0 and every cosine 1, twice (position and step)
    assert np.asarray(out).shape == (1, 4), np.asarray(out).shape
    np.testing.assert_allclose(out, [[0.0, 0.0, 2.0, 2.0]], atol=1e-12)


@case("ex13_task1")
def test_signal_of_step_3(universal):
    return universal.timestep_signal(3, 5, 6)


@test_signal_of_step_3.judge
def _(out, ref):
    assert np.asarray(out).shape == (5, 6), np.asarray(out).shape
    np.testing.assert_allclose(out, ref, rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------- task 2: the encoder
LAYER = {"attention.sublayer.query": "linear", "attention.sublayer.key": "linear",
         "attention.sublayer.value": "linear", "attention.sublayer.dense": "linear",
         "attention.LayerNorm": "norm", "ffn.sublayer.ffn": "linear",
         "ffn.sublayer.ffn_output": "linear", "ffn.LayerNorm": "norm"}


def one_layer_count(H, intermediate):
    """Parameters of one Post-LN layer: attention 4H² + 4H, FFN 2·H·I + I + H, two LayerNorms 4H."""
    return 4 * H * H + 4 * H + 2 * H * intermediate + intermediate + H + 4 * H


def drawn_encoder(universal, H, heads, intermediate, steps, seed):
    """The student's encoder in float64, every parameter drawn from ``seed`` in the order of its
    name (so that a LayerNorm left at 1 and 0, or a copy of the layer that is not the one
    registered, shows, and the reference, built in any order, holds the same values)."""
    ut = universal.UniversalEncoder(H, heads, intermediate, steps=steps).double()
    rng = np.random.default_rng(seed)
    for _, p in sorted(ut.named_parameters(), key=lambda item: item[0]):
        p.data = 0.5 * rng.standard_normal(p.shape)
    return ut


def named_arrays(ut):
    return {name: p.numpy() for name, p in ut.named_parameters()}


def assert_one_layer(out, H, intermediate):
    names = {f"{module}.{part}" for module in LAYER for part in ("weight", "bias")}
    assert set(out["parameters"]) == names, \
        f"parameters {sorted(set(out['parameters']) ^ names)} differ from ONE layer's (attention, ffn)"
    assert out["count"] == one_layer_count(H, intermediate), \
        f"{out['count']:,} parameters; one layer has {one_layer_count(H, intermediate):,}"


@case("ex13_task2")
def test_one_layer_of_parameters_and_unrolled_equivalence(universal, given):
    """Three steps with the grader's parameters and, where the encoder calls timestep_signal, the
    grader's signals (so that this task is judged apart from task 1): the reference's output."""
    ut = drawn_encoder(universal, 8, 2, 16, steps=3, seed=given["seed"])
    own = universal.timestep_signal
    universal.timestep_signal = lambda t, T, H: given["signals"][t]
    try:
        out = ut(minishare.tensor(given["x"])).numpy()
    finally:
        universal.timestep_signal = own
    return {"count": minishare.count_parameters(ut), "parameters": named_arrays(ut), "out": out}


@test_one_layer_of_parameters_and_unrolled_equivalence.given
def _(rng):
    return {"seed": int(rng.integers(2 ** 31)), "x": rng.standard_normal((2, 4, 8)),
            "signals": rng.standard_normal((3, 4, 8))}


@test_one_layer_of_parameters_and_unrolled_equivalence.judge
def _(out, ref):
    assert_one_layer(out, 8, 16)
    np.testing.assert_allclose(out["out"], ref["out"], rtol=1e-9, atol=1e-10)


@case("ex13_task3")
def test_act_hand_worked(universal):
    return list(universal.act_halting([0.3, 0.5, 0.4]))


@test_act_hand_worked.judge
def _(out, ref):
    # 0.3 + 0.5 = 0.8 < 0.99, 0.8 + 0.4 = 1.2 ≥ 0.99: N = 3, R = 1 − 0.8 = 0.2, ponder N + R = 3.2
    n, r, weights = out
    assert n == 3 and isinstance(n, int), n
    assert math.isclose(r, 0.2, abs_tol=1e-12), r
    np.testing.assert_allclose(np.asarray(weights, dtype=float), [0.3, 0.5, 0.2], atol=1e-12)


### BEGIN HIDDEN TESTS
# The signal and the encoder in NumPy, for the hidden judges: tasks 1 and 2's answers, so the
# release must not ship them.
def t2t_signal(t, T, H):
    """Tensor2Tensor's layout, one entry at a time with math.sin/cos (no NumPy broadcasting)."""
    K = H // 2
    entries = np.zeros((T, H))                # an odd H keeps a last channel of zeros
    for p in range(T):
        for j in range(K):
            w = 10000.0 ** (-j / max(K - 1, 1))
            entries[p, j] = math.sin(p * w) + math.sin(t * w)
            entries[p, K + j] = math.cos(p * w) + math.cos(t * w)
    return entries


def layer_norm(x, weight, bias, eps=1e-12):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def linear(P, name, x):
    return x @ P[f"{name}.weight"].T + P[f"{name}.bias"]


def attention(P, x, heads, mask):
    B, T, H = x.shape
    d = H // heads

    def split(t):
        return t.reshape(B, T, heads, d).transpose(0, 2, 1, 3)           # (B, heads, T, d)
    q, k, v = (split(linear(P, f"attention.sublayer.{n}", x)) for n in ("query", "key", "value"))
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d)                  # (B, heads, T, T)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    probs = np.exp(scores)
    probs /= probs.sum(axis=-1, keepdims=True)
    return linear(P, "attention.sublayer.dense", (probs @ v).transpose(0, 2, 1, 3).reshape(B, T, H))


def universal_numpy(P, x, signals, heads, mask=None):
    """The Universal Transformer's encoder in NumPy: before step t add signals[t], then the ONE
    layer (Post-LN self-attention, Post-LN ReLU FFN) whose parameters are P."""
    for signal in signals:
        x = x + signal
        x = layer_norm(x + attention(P, x, heads, mask), P["attention.LayerNorm.weight"], P["attention.LayerNorm.bias"])
        hidden = np.maximum(linear(P, "ffn.sublayer.ffn", x), 0.0)
        x = layer_norm(x + linear(P, "ffn.sublayer.ffn_output", hidden), P["ffn.LayerNorm.weight"], P["ffn.LayerNorm.bias"])
    return x


@case("ex13_task1")
def test_signals_of_different_steps_differ_by_the_step_part_only(universal):
    return [universal.timestep_signal(1, 4, 8), universal.timestep_signal(2, 4, 8)]


@test_signals_of_different_steps_differ_by_the_step_part_only.judge
def _(out, ref):
    a, b = (np.asarray(s, dtype=float) for s in out)
    difference = b - a                                   # the same for every position
    np.testing.assert_allclose(difference, np.broadcast_to(difference[0], difference.shape), atol=1e-12)
    np.testing.assert_allclose(difference[0], t2t_signal(2, 1, 8)[0] - t2t_signal(1, 1, 8)[0], atol=1e-12)


@case("ex13_task1")
def test_signal_for_many_shapes_and_steps(universal):
    return {f"{t} {T} {H}": universal.timestep_signal(t, T, H)
            for t in (0, 1, 5) for T in (1, 3, 7) for H in (2, 4, 10, 16)}


@test_signal_for_many_shapes_and_steps.judge
def _(out, ref):
    for key, signal in out.items():
        t, T, H = map(int, key.split())
        assert np.asarray(signal).shape == (T, H), (key, np.asarray(signal).shape)
        np.testing.assert_allclose(signal, t2t_signal(t, T, H), rtol=1e-10, atol=1e-12, err_msg=key)


@case("ex13_task1")
def test_signal_of_an_odd_width_ends_with_a_zero_channel(universal):
    return [universal.timestep_signal(2, 3, 5), universal.timestep_signal(1, 2, 3)]


@test_signal_of_an_odd_width_ends_with_a_zero_channel.judge
def _(out, ref):
    for signal, (t, T, H) in zip(out, [(2, 3, 5), (1, 2, 3)]):
        assert np.asarray(signal).shape == (T, H), np.asarray(signal).shape
        np.testing.assert_allclose(signal, t2t_signal(t, T, H), rtol=1e-10, atol=1e-12)


@case("ex13_task2")
def test_padding_mask_reaches_the_attention(universal, given):
    ut = drawn_encoder(universal, 8, 4, 12, steps=2, seed=given["seed"])
    return {"count": minishare.count_parameters(ut), "parameters": named_arrays(ut),
            "signals": [np.asarray(universal.timestep_signal(t, 5, 8), dtype=float) for t in range(2)],
            "out": ut(minishare.tensor(given["x"]), mask=given["mask"]).numpy()}


@test_padding_mask_reaches_the_attention.given
def _(rng):
    lengths = np.array([[rng.integers(1, 5)], [5]])                  # the first sequence is padded
    return {"seed": int(rng.integers(2 ** 31)), "x": rng.standard_normal((2, 5, 8)),
            "mask": (np.arange(5) < lengths)[:, None, None, :]}     # (B, 1, 1, T)


@test_padding_mask_reaches_the_attention.judge
def _(out, ref, given):
    assert_one_layer(out, 8, 12)
    expected = universal_numpy(out["parameters"], given["x"], out["signals"], heads=4, mask=given["mask"])
    np.testing.assert_allclose(out["out"], expected, rtol=1e-9, atol=1e-10)


@case("ex13_task2")
def test_shared_gradient_is_the_sum_over_steps(universal, given):
    """The one layer's gradient collects every step's use: against finite differences of the
    NumPy encoder, where moving a parameter moves it at every step."""
    ut = drawn_encoder(universal, 4, 2, 8, steps=3, seed=given["seed"])
    ut(minishare.tensor(given["x"])).backward(minishare.tensor(given["v"]))
    return {"parameters": named_arrays(ut),
            "signals": [np.asarray(universal.timestep_signal(t, 3, 4), dtype=float) for t in range(3)],
            "grads": {name: (None if p.grad is None else np.asarray(p.grad, dtype=float))
                      for name, p in ut.named_parameters()}}


@test_shared_gradient_is_the_sum_over_steps.given
def _(rng):
    return {"seed": int(rng.integers(2 ** 31)), "x": rng.standard_normal((1, 3, 4)), "v": rng.standard_normal((1, 3, 4))}


@test_shared_gradient_is_the_sum_over_steps.judge
def _(out, ref, given):
    P, x, v, signals = out["parameters"], given["x"], given["v"], out["signals"]
    entries = [("ffn.sublayer.ffn.weight", (0, 0)), ("ffn.sublayer.ffn.weight", (5, 3)),
               ("ffn.sublayer.ffn_output.bias", (1,)), ("attention.sublayer.query.weight", (1, 2)),
               ("attention.sublayer.value.weight", (3, 0)), ("attention.LayerNorm.weight", (2,)),
               ("ffn.LayerNorm.bias", (0,))]
    h = 1e-6
    for name, index in entries:
        assert name in P and out["grads"].get(name) is not None, f"{name}: no gradient"
        moved = []
        for sign in (1, -1):
            Q = {k: a.copy() for k, a in P.items()}
            Q[name][index] += sign * h
            moved.append(float((v * universal_numpy(Q, x, signals, heads=2)).sum()))
        numeric = (moved[0] - moved[1]) / (2 * h)
        got = float(out["grads"][name][index])
        assert math.isclose(got, numeric, rel_tol=1e-5, abs_tol=1e-7), \
            f"d/d {name}{list(index)}: {got!r}, finite differences {numeric!r}"


@case("ex13_task3")
def test_act_halts_at_the_first_step_or_runs_to_the_end(universal):
    return [list(universal.act_halting(h)) for h in ([0.995, 0.5], [0.1, 0.1, 0.1], [0.5, 0.495, 0.3])]


@test_act_halts_at_the_first_step_or_runs_to_the_end.judge
def _(out, ref):
    (n1, r1, w1), (n2, r2, w2), (n3, r3, w3) = out
    assert n1 == 1 and math.isclose(r1, 1.0, abs_tol=1e-12), (n1, r1)      # 0.995 ≥ 0.99 at once
    np.testing.assert_allclose(np.asarray(w1, dtype=float), [1.0], atol=1e-12)
    assert n2 == 3 and math.isclose(r2, 0.8, abs_tol=1e-12), (n2, r2)      # never reaches: the last step
    np.testing.assert_allclose(np.asarray(w2, dtype=float), [0.1, 0.1, 0.8], atol=1e-12)
    assert n3 == 2 and math.isclose(r3, 0.5, abs_tol=1e-12), (n3, r3)      # 0.995 ≥ 1 − ε at step 2


@case("ex13_task3")
def test_act_remainder_never_negative_and_epsilon_honoured(universal):
    return {"overshoot": list(universal.act_halting([0.6, 0.6, 0.6])),
            "epsilon 0.1": list(universal.act_halting([0.5, 0.45, 0.5], epsilon=0.1)),
            "empty": raises(ValueError, universal.act_halting, [])}


@test_act_remainder_never_negative_and_epsilon_honoured.judge
def _(out, ref):
    n, r, weights = out["overshoot"]            # 0.6 + 0.6 = 1.2 ≥ 0.99 at step 2: R = 1 − 0.6
    assert n == 2 and math.isclose(r, 0.4, abs_tol=1e-12), (n, r)
    np.testing.assert_allclose(np.asarray(weights, dtype=float), [0.6, 0.4], atol=1e-12)
    n, r, weights = out["epsilon 0.1"]          # 0.95 ≥ 1 − 0.1 at step 2
    assert n == 2 and math.isclose(r, 0.5, abs_tol=1e-12), (n, r)
    assert out["empty"] is True, "act_halting([]) must raise ValueError"


def act_reference(h, epsilon):
    """ACT by cumulative sums: N is the first index where the running sum reaches 1 − ε."""
    reached = np.nonzero(np.cumsum(h) >= 1 - epsilon)[0]
    n = int(reached[0]) + 1 if len(reached) else len(h)
    remainder = 1.0 - float(np.sum(h[:n - 1]))
    return n, remainder, list(h[:n - 1]) + [remainder]


@case("ex13_task3")
def test_act_on_random_halting_sequences(universal, given):
    return [list(universal.act_halting(h, epsilon=0.05)) for h in given]


@test_act_on_random_halting_sequences.given
def _(rng):
    return [rng.uniform(0.01, 0.7, size=int(rng.integers(1, 9))).tolist() for _ in range(200)]


@test_act_on_random_halting_sequences.judge
def _(out, ref, given):
    for h, (n, r, weights) in zip(given, out):
        en, er, ew = act_reference(np.array(h), 0.05)
        assert n == en and math.isclose(r, er, abs_tol=1e-9), (h, (n, r), (en, er))
        weights = np.asarray(weights, dtype=float)
        np.testing.assert_allclose(weights, ew, atol=1e-9, err_msg=str(h))
        assert r > 0 and math.isclose(weights.sum(), 1.0, abs_tol=1e-9), (h, r, weights)
### END HIDDEN TESTS
