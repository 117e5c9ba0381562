"""Adaptive Computation Time (``minishare.nn.act``; Graves, 2016; Dehghani et al., 2018, Sec. 2.2):
a hand-worked example, the invariant Σ w_n = 1, the carried-forward state of a halted position,
finite differences, and ACT inside the stacks and the models.

The halting decision N is piecewise constant in the inputs: where a cumulated probability sits
within the finite-difference step of 1 − ε, nudging an input flips N and the numerical derivative
jumps. The gradchecks therefore first measure (in NumPy, from the states the module reports) how
far every cumulated probability is from 1 − ε, and assert that margin is far larger than the step.
"""
import math

import numpy as np
import pytest

import minishare
from minishare import backend, functional as F
from minishare.models import DecoderLM, EncoderDecoderModel, TransformerConfig
from minishare.nn import encoder
from minishare.nn.act import AdaptiveComputationTime
from minishare.sharing import Plan
from conftest import check, host, leaf, randn

EPS = 0.01


def logit(p):
    return math.log(p / (1 - p))


def act_module(H, weight, bias, epsilon=EPS):
    act = AdaptiveComputationTime(H, epsilon).double()
    act.halting.weight.data = backend.asarray(np.asarray(weight, dtype=np.float64).reshape(1, H))
    act.halting.bias.data = backend.asarray(np.asarray([bias], dtype=np.float64))
    return act


# ==================================================================== a hand-worked example
# H = 1, halting unit p = σ(s): each step sets the state to logit(p) for the p we want.
P = [  # halting probabilities per step (rows) of four positions (columns)
    [0.5, 0.9, 0.1, 0.999],
    [0.25, 0.25, 0.1, 0.5],
    [0.75, 0.5, 0.1, 0.5],
]
# worked out by hand, threshold 1 - ε = 0.99, at most 3 steps:
#   A: 0.5, 0.75 (< 0.99), 1.5 (>= 0.99): N = 3, R = 1 - 0.75 = 0.25, w = 0.5, 0.25, 0.25
#   B: 0.9 (< 0.99), 1.15: N = 2, R = 1 - 0.9 = 0.1, w = 0.9, 0.1, 0
#   C: 0.1, 0.2, and the last step forces the halt: N = 3, R = 1 - 0.2 = 0.8, w = 0.1, 0.1, 0.8
#   D: 0.999 >= 0.99 at once: N = 1, R = 1, w = 1, 0, 0
N_HAND = [3, 2, 3, 1]
R_HAND = [0.25, 0.1, 0.8, 1.0]
W_HAND = [[0.5, 0.9, 0.1, 1.0], [0.25, 0.1, 0.1, 0.0], [0.25, 0.0, 0.8, 0.0]]


def scripted_step(seen):
    """A step function that ignores its input and returns the scripted states; it records what
    each step was given."""
    def step(n, s):
        seen.append(host(s))
        return minishare.tensor(np.array([[[logit(p)] for p in P[n]]]))          # (1, 4, 1)
    return step


def test_hand_worked_halting_remainders_weights_and_ponder_time():
    act = act_module(1, [1.0], 0.0)
    seen = []
    y, ponder = act(minishare.tensor(np.zeros((1, 4, 1))), scripted_step(seen), max_steps=3)
    np.testing.assert_array_equal(host(ponder.n_updates)[0], N_HAND)
    np.testing.assert_allclose(host(ponder.remainder)[0], R_HAND, atol=1e-12)
    np.testing.assert_allclose(host(ponder.weights)[:, 0], W_HAND, atol=1e-12)
    np.testing.assert_allclose(host(ponder.ponder_time)[0], [3.25, 2.1, 3.8, 2.0], atol=1e-12)
    # y = Σ w_n s_n, where a halted position's s_n is its last state carried forward
    states = np.array([[logit(p) for p in row] for row in P])                # (steps, positions)
    carried = states.copy()
    carried[2, 1], carried[1:, 3] = states[1, 1], states[0, 3]
    np.testing.assert_allclose(host(y)[0, :, 0], (np.array(W_HAND) * carried).sum(0), atol=1e-12)


def test_a_halted_position_is_carried_forward_unchanged():
    act = act_module(1, [1.0], 0.0)
    seen = []
    _, ponder = act(minishare.tensor(np.zeros((1, 4, 1))), scripted_step(seen), max_steps=3)
    after = [host(s)[0, :, 0] for s in ponder.states]                       # s_0 .. s_3
    # D halted after step 1, B after step 2: later steps leave their states as they were
    assert after[3][3] == after[2][3] == after[1][3] == pytest.approx(logit(0.999))
    assert after[3][1] == after[2][1] == pytest.approx(logit(0.25))
    # and step 3 was given those carried states (the running positions attend to them)
    assert seen[2][0, 1, 0] == pytest.approx(logit(0.25))
    assert seen[2][0, 3, 0] == pytest.approx(logit(0.999))


def test_the_loop_stops_when_every_position_has_halted():
    act = act_module(1, [0.0], logit(0.999))                                 # p = 0.999: N = 1
    seen = []
    _, ponder = act(minishare.tensor(np.zeros((1, 4, 1))), scripted_step(seen), max_steps=3)
    assert len(seen) == 1 and host(ponder.weights).shape == (1, 1, 4)
    np.testing.assert_allclose(host(ponder.ponder_time), 2.0, atol=1e-12)


# ================================================================================ invariants
def tanh_step(W):
    return lambda n, s: F.tanh(s @ W + 0.3 * n)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("max_steps", [1, 2, 5])
def test_weights_of_every_position_sum_to_one(seed, max_steps):
    rng = np.random.default_rng(seed)
    H = 3
    act = act_module(H, rng.standard_normal(H), rng.normal(0, 1.5), epsilon=rng.uniform(0.001, 0.3))
    x = minishare.tensor(rng.standard_normal((2, 5, H)))
    _, ponder = act(x, tanh_step(minishare.tensor(rng.standard_normal((H, H)))), max_steps)
    weights, n = host(ponder.weights), host(ponder.n_updates)
    np.testing.assert_allclose(weights.sum(0), 1.0, atol=1e-12)
    assert weights.min() >= 0
    assert ((1 <= n) & (n <= max_steps)).all()
    taken = np.arange(weights.shape[0])[:, None, None] < n                  # steps each position took
    assert (weights[~taken] == 0).all()
    r = host(ponder.remainder)
    assert ((0 < r) & (r <= 1)).all()
    np.testing.assert_allclose(host(ponder.ponder_time), n + r, atol=1e-12)


# =========================================================================== finite differences
def margin_to_threshold(act, ponder, epsilon):
    """min |p_1 + ... + p_n − (1 − ε)| over every step a position took, from the reported states
    (NumPy, independent of the module's bookkeeping)."""
    w = host(act.halting.weight)[0]
    b = host(act.halting.bias)[0]
    n_taken = host(ponder.n_updates)
    cumulated = np.zeros(n_taken.shape)
    margin = np.inf
    for n, s in enumerate(ponder.states[1:]):
        p = 1 / (1 + np.exp(-(host(s) @ w + b)))
        cumulated = cumulated + p
        took = n < n_taken
        margin = min(margin, np.abs(cumulated - (1 - epsilon))[took].min())
    return margin


def test_act_gradcheck_away_from_the_halting_thresholds():
    rng = np.random.default_rng(3)
    H = 3
    act = act_module(H, rng.standard_normal(H), -0.8)
    x, W = leaf(randn(2, 4, H, seed=4)), leaf(0.7 * randn(H, H, seed=5))
    y, ponder = act(x, tanh_step(W), 4)
    n = host(ponder.n_updates)
    assert len(np.unique(n)) >= 2, "the example should halt positions at different steps"
    assert margin_to_threshold(act, ponder, EPS) > 1e-3          # finite differences move p by ~1e-6
    params = [x, W, act.halting.weight, act.halting.bias]
    names = ["x", "W of the step", "halting weight", "halting bias"]
    check(lambda *_: act(x, tanh_step(W), 4)[0], *params, names=names)
    check(lambda *_: act(x, tanh_step(W), 4)[1].ponder_time, *params, names=names)


def test_ponder_cost_gradient_raises_the_halting_probabilities_before_the_halt():
    """dρ/dp_n = −1 for n < N (through R): gradient descent on ρ pushes the halting bias up."""
    act = act_module(1, [0.0], logit(0.4))                                   # p = 0.4: N = 3, R = 0.2
    _, ponder = act(minishare.tensor(np.zeros((1, 2, 1))), lambda n, s: s, max_steps=5)
    np.testing.assert_allclose(host(ponder.ponder_time), 3.2, atol=1e-12)
    ponder.ponder_time.sum().backward()
    # ρ = 3 + 1 − 2σ(b) per position: dρ/db = −2 σ(b)(1 − σ(b)) = −0.48, two positions
    np.testing.assert_allclose(host(act.halting.bias.grad), [-0.96], atol=1e-12)


def test_act_refuses_bad_settings():
    with pytest.raises(ValueError, match="epsilon"):
        AdaptiveComputationTime(4, epsilon=1.0)
    with pytest.raises(ValueError, match="max_steps"):
        AdaptiveComputationTime(4)(minishare.tensor(np.zeros((1, 2, 4))), lambda n, s: s, 0)


# ===================================================================== ACT inside a stack
H, HEADS, INNER = 8, 2, 16


def make_stack(sharing, N, act, seed=0):
    minishare.manual_seed(seed)
    stack = encoder(Plan.build(sharing, N), H, HEADS, INNER, "gelu_new", "post", 0.0, 0.0, 1e-12,
                    timestep=True, act=act).double()
    rng = np.random.default_rng(seed + 1)
    for p in stack.parameters():
        p.data = backend.asarray(host(p) + 0.3 * rng.standard_normal(p.shape))
    return stack


@pytest.mark.parametrize("sharing", ["universal", "not-shared"])
def test_act_that_never_halts_early_is_the_plain_stack(sharing):
    """With p ≈ 0 every position runs all N steps and R ≈ 1 goes to the last state: the output is
    the plain stack's, so step n used the parameters the plan gives position n."""
    with_act, plain = make_stack(sharing, 3, True), make_stack(sharing, 3, False, seed=5)
    plain.load_state_dict({k: host(v) for k, v in with_act.state_dict().items() if "halting" not in k})
    with_act.act.halting.weight.data *= 0
    with_act.act.halting.bias.data = backend.asarray(np.array([-40.0]))
    x = minishare.tensor(randn(2, 4, H, seed=6))
    inputs = {"attention": {"mask": None}, "ffn": {}}
    y, ponder = with_act(x, inputs, output_ponder=True)
    np.testing.assert_allclose(host(y), host(plain(x, inputs)), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(host(ponder.n_updates), 3)


def test_stack_with_act_gradcheck():
    stack = make_stack("universal", 4, True)
    x = leaf(randn(2, 3, H, seed=7))
    inputs = {"attention": {"mask": None}, "ffn": {}}
    _, ponder = stack(x, inputs, output_ponder=True)
    assert margin_to_threshold(stack.act, ponder, EPS) > 1e-3
    params = [x, stack.ffn_sets[0].sublayer.ffn_output.bias, stack.act.halting.weight]
    check(lambda *_: stack(x, inputs), *params, names=["x", "ffn_output.bias", "halting weight"])


# ============================================================================ ACT in the models
V = 11


def config(**overrides):
    fields = dict(vocab_size=V, embedding_size=4, hidden_size=H, num_hidden_layers=3,
                  num_attention_heads=HEADS, intermediate_size=INNER, max_position_embeddings=8,
                  hidden_act="gelu_new", sharing="universal", timestep_signal=True, act=True)
    return TransformerConfig(**{**fields, **overrides})


def build(cls, cfg, seed=0):
    minishare.manual_seed(seed)
    model = cls(cfg).double()
    rng = np.random.default_rng(seed + 1)
    for p in model.parameters():
        p.data = backend.asarray(host(p) + 0.3 * rng.standard_normal(p.shape))
    return model


SRC = np.array([[4, 5, 6], [7, 8, 0]])
SRC_MASK = SRC != 0
TGT_IN = np.array([[1, 4, 5, 6], [1, 7, 8, 0]])
LABELS = np.array([[4, 5, 6, 2], [7, 8, 2, -100]])


def test_encoder_decoder_loss_adds_tau_times_the_mean_ponder_time_of_the_real_tokens():
    model = build(EncoderDecoderModel, config(act_loss_weight=0.0))
    base = model(SRC, TGT_IN, attention_mask=SRC_MASK, labels=LABELS)
    model.config.act_loss_weight = 0.5
    out = model(SRC, TGT_IN, attention_mask=SRC_MASK, labels=LABELS)
    enc = host(out.encoder_ponder.n_updates) + host(out.encoder_ponder.remainder)
    dec = host(out.decoder_ponder.n_updates) + host(out.decoder_ponder.remainder)
    expected = enc[SRC_MASK].mean() + dec[LABELS != -100].mean()
    assert out.ponder_cost.item() == pytest.approx(expected, abs=1e-12)
    assert out.loss.item() - base.loss.item() == pytest.approx(0.5 * expected, abs=1e-12)


def test_decoder_lm_loss_adds_tau_times_the_mean_ponder_time():
    model = build(DecoderLM, config(act_loss_weight=0.0))
    base = model(TGT_IN, labels=TGT_IN)
    model.config.act_loss_weight = 0.25
    out = model(TGT_IN, labels=TGT_IN)
    expected = (host(out.decoder_ponder.n_updates) + host(out.decoder_ponder.remainder)).mean()
    assert out.loss.item() - base.loss.item() == pytest.approx(0.25 * expected, abs=1e-12)


def test_decoder_with_act_never_looks_ahead():
    model = build(DecoderLM, config())
    ids = np.array([[3, 4, 5, 6]])
    base = model(ids)
    for t in range(1, 4):
        moved = ids.copy()
        moved[0, t:] = 9
        out = model(moved)
        np.testing.assert_allclose(host(out.logits)[:, :t], host(base.logits)[:, :t], rtol=0, atol=1e-12)
        np.testing.assert_allclose(host(out.decoder_ponder.ponder_time)[:, :t],
                                   host(base.decoder_ponder.ponder_time)[:, :t], rtol=0, atol=1e-12)


@pytest.mark.parametrize("act", [False, True])
def test_encoder_decoder_with_the_universal_transformer_options_gradcheck(act):
    model = build(EncoderDecoderModel, config(act=act, act_loss_weight=0.3))
    if act:
        out = model(SRC, TGT_IN, attention_mask=SRC_MASK)
        assert margin_to_threshold(model.encoder.act, out.encoder_ponder, EPS) > 1e-3
        assert margin_to_threshold(model.decoder.act, out.decoder_ponder, EPS) > 1e-3
    params = {"word_embeddings": model.embeddings.word_embeddings.weight,
              "encoder ffn_output.bias": model.encoder.ffn_sets[0].sublayer.ffn_output.bias,
              "decoder cross value.bias": model.decoder.cross_attention_sets[0].sublayer.value.bias}
    if act:
        params["encoder halting weight"] = model.encoder.act.halting.weight
        params["decoder halting bias"] = model.decoder.act.halting.bias
    check(lambda *_: model(SRC, TGT_IN, attention_mask=SRC_MASK, labels=LABELS).loss,
          *params.values(), names=list(params))


@pytest.mark.parametrize("act", [False, True])
def test_decoder_lm_with_the_universal_transformer_options_gradcheck(act):
    model = build(DecoderLM, config(act=act))
    if act:
        ponder = model(TGT_IN).decoder_ponder
        assert margin_to_threshold(model.decoder.act, ponder, EPS) > 1e-3
    params = {"word_embeddings": model.embeddings.word_embeddings.weight,
              "attention value.bias": model.decoder.attention_sets[0].sublayer.value.bias}
    check(lambda *_: model(TGT_IN, labels=TGT_IN).loss, *params.values(), names=list(params))


def test_timestep_signal_changes_the_seq2seq_and_lm_models():
    for cls, call in ((EncoderDecoderModel, lambda m: m(SRC, TGT_IN, attention_mask=SRC_MASK)),
                      (DecoderLM, lambda m: m(TGT_IN))):
        on, off = build(cls, config(act=False)), build(cls, config(act=False, timestep_signal=False))
        off.load_state_dict({k: host(v) for k, v in on.state_dict().items()})
        assert np.abs(host(call(on).logits) - host(call(off).logits)).max() > 1e-3


@pytest.mark.parametrize("field, value, message", [
    ("timestep_signal", "yes", "timestep_signal must be True or False"),
    ("act", 1, "act must be True or False"),
    ("act_epsilon", 0.0, "act_epsilon must lie in"),
    ("act_epsilon", 1.5, "act_epsilon must lie in"),
    ("act_loss_weight", -0.1, "act_loss_weight must be >= 0"),
])
def test_config_refuses_bad_universal_transformer_fields(field, value, message):
    with pytest.raises(ValueError, match=message):
        config(**{field: value})
