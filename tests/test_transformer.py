"""The Transformer building blocks (``minishare.nn.attention``, ``minishare.nn.transformer``) against
computations written out here in NumPy, against finite differences, and against an unshared copy.

Which parameter set serves which position is written by hand from the papers as letters
("ABCCBA" is Takase & Kiyono's Cycle (rev) for M = 3, N = 6), never read back from the plan the
stack was built with. Every model here is tiny (H = 8, 2 heads) and float64 where gradients meet.
"""
import math

import numpy as np
import pytest

import minishare
from minishare import backend
from minishare.nn import FFN, MultiHeadAttention, Residual, causal_mask, decoder, encoder, padding_mask
from minishare.nn.transformer import timestep_signal
from minishare.sharing import Plan
from conftest import SET_NAME, letters, unshare  # noqa: E402

B, T, S, H, HEADS, INNER = 2, 4, 3, 8, 2, 16
EPS = 1e-12


# --- host helpers -----------------------------------------------------------------------------
def host(x):
    """Host NumPy copy of a Tensor or backend array."""
    return x.numpy() if isinstance(x, minishare.Tensor) else backend.to_numpy(x)


def leaf(array, requires_grad=True):
    return minishare.tensor(np.asarray(array, dtype=np.float64), requires_grad=requires_grad)


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def perturb(module, seed=1, scale=0.3):
    """Move every parameter away from its initial value (LayerNorm starts at 1 and 0, biases at 0,
    which would hide a wrongly wired bias or norm), in place, keeping identities."""
    rng = np.random.default_rng(seed)
    for p in module.parameters():
        p.data = backend.asarray(host(p) + scale * rng.standard_normal(p.shape)).astype(p.dtype)
    return module


def make_encoder(sharing, N, M=None, norm="post", act="gelu_new", timestep=False, seed=0):
    minishare.manual_seed(seed)
    stack = encoder(Plan.build(sharing, N, M), H, HEADS, INNER, act, norm, 0.0, 0.0, EPS,
                    timestep=timestep)
    return perturb(stack.double(), seed=seed + 1)


def make_decoder(sharing, N, M=None, norm="post", seed=0, timestep=False):
    minishare.manual_seed(seed)
    stack = decoder(Plan.build(sharing, N, M), H, HEADS, INNER, "gelu_new", norm, 0.0, 0.0, EPS,
                    timestep=timestep)
    return perturb(stack.double(), seed=seed + 1)


PAD = np.array([[1, 1, 1, 0], [1, 1, 1, 1]])       # (B, T): the first sequence has one pad
MEMORY_PAD = np.array([[1, 1, 0], [1, 1, 1]])      # (B, S)


def encoder_inputs():
    mask = padding_mask(minishare.tensor(PAD))
    return {"attention": {"mask": mask}, "ffn": {}}


def decoder_inputs(memory):
    return {"attention": {"mask": causal_mask(T)},
            "cross_attention": {"mask": padding_mask(minishare.tensor(MEMORY_PAD)), "context": memory},
            "ffn": {}}


# --- NumPy reference: the equations of Vaswani et al. (2017) and BERT, written out ----------------
def np_linear(x, lin):
    return x @ host(lin.weight).T + host(lin.bias)


def np_layer_norm(x, ln, eps=EPS):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * host(ln.weight) + host(ln.bias)


def np_act(x, act):
    if act == "gelu_new":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    if act == "gelu":
        return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
    if act == "relu":
        return np.maximum(x, 0)
    return np.tanh(x)


def np_attention(mha, x, mask=None, context=None):
    """softmax(Q Kᵀ / √d + mask) V per head, heads concatenated, then the output dense."""
    context = x if context is None else context
    b, tq, h = x.shape
    d = h // HEADS
    split = lambda t: t.reshape(b, t.shape[1], HEADS, d).transpose(0, 2, 1, 3)   # (B, h, T, d)
    q, k, v = (split(np_linear(z, lin)) for z, lin in
               ((x, mha.query), (context, mha.key), (context, mha.value)))
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d)                          # (B, h, Tq, Tk)
    if mask is not None:
        scores = np.where(np.broadcast_to(mask, scores.shape), scores, -np.inf)
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    return np_linear((probs @ v).transpose(0, 2, 1, 3).reshape(b, tq, h), mha.dense)


def np_ffn(ffn, x, act="gelu_new"):
    return np_linear(np_act(np_linear(x, ffn.ffn), act), ffn.ffn_output)


def np_residual(res, f, x, norm):
    if norm == "post":
        return np_layer_norm(x + f(x), res.LayerNorm)
    return x + f(np_layer_norm(x, res.LayerNorm))


def np_stack(stack, x, schedules, norm, masks, memory=None, act="gelu_new", timestep=False):
    """The stack computed in NumPy, position i using set ``schedules[component][i]``."""
    N = len(schedules["attention"])
    for i in range(N):
        if timestep:
            x = x + np_timestep_signal(i, x.shape[1], x.shape[2])
        res = stack.attention_sets[schedules["attention"][i]]
        x = np_residual(res, lambda z: np_attention(res.sublayer, z, masks["attention"]), x, norm)
        if "cross_attention" in schedules:
            res = stack.cross_attention_sets[schedules["cross_attention"][i]]
            x = np_residual(res, lambda z: np_attention(res.sublayer, z, masks["cross_attention"],
                                                        memory), x, norm)
        res = stack.ffn_sets[schedules["ffn"][i]]
        x = np_residual(res, lambda z: np_ffn(res.sublayer, z, act), x, norm)
    return np_layer_norm(x, stack.final_norm) if norm == "pre" else x


def np_timestep_signal(t, length, h):
    """Dehghani et al. (2018), Sec. 2.1: position and timestep sinusoids, summed."""
    out = np.zeros((length, h))
    for p in range(length):
        for j in range(h // 2):
            rate = 10000.0 ** (2 * j / h)
            out[p, 2 * j] = math.sin(p / rate) + math.sin(t / rate)
            out[p, 2 * j + 1] = math.cos(p / rate) + math.cos(t / rate)
    return out


def np_pad_mask():
    return PAD.astype(bool)[:, None, None, :]


# --- plans as the papers write them: (sharing, N, M, letters per component) --------------------------
ENCODER_PLANS = {
    "not-shared": ("not-shared", 4, None, {"attention": "ABCD", "ffn": "ABCD"}),
    "all-shared": ("all-shared", 4, None, {"attention": "AAAA", "ffn": "AAAA"}),
    "shared-attention": ("shared-attention", 4, None, {"attention": "AAAA", "ffn": "ABCD"}),
    "shared-ffn": ("shared-ffn", 4, None, {"attention": "ABCD", "ffn": "AAAA"}),
    "universal": ("universal", 3, None, {"attention": "AAA", "ffn": "AAA"}),
    "sequence-3-6": ("sequence", 6, 3, {"attention": "AABBCC", "ffn": "AABBCC"}),
    "cycle-3-6": ("cycle", 6, 3, {"attention": "ABCABC", "ffn": "ABCABC"}),
    "cycle-rev-3-6": ("cycle-rev", 6, 3, {"attention": "ABCCBA", "ffn": "ABCCBA"}),
    "cycle-rev-2-4": ("cycle-rev", 4, 2, {"attention": "ABBA", "ffn": "ABBA"}),
    "explicit": ([0, 1, 1, 0], 4, None, {"attention": "ABBA", "ffn": "ABBA"}),
}
DECODER_PLANS = {
    "not-shared": ("not-shared", 3, None, {c: "ABC" for c in ("attention", "cross_attention", "ffn")}),
    "all-shared": ("all-shared", 3, None, {c: "AAA" for c in ("attention", "cross_attention", "ffn")}),
    "cycle-rev-2-4": ("cycle-rev", 4, 2, {c: "ABBA" for c in ("attention", "cross_attention", "ffn")}),
    "explicit-dict": ({"attention": [0, 0, 1], "cross_attention": [0, 1, 2], "ffn": [0, 0, 0]}, 3, None,
                      {"attention": "AAB", "cross_attention": "ABC", "ffn": "AAA"}),
}


# ================================================================================== the components
def test_attention_matches_numpy_with_padding_causal_and_cross_masks():
    minishare.manual_seed(0)
    mha = perturb(MultiHeadAttention(H, HEADS).double())
    x, memory = randn(B, T, H, seed=1), randn(B, S, H, seed=2)
    cases = [
        (None, None, None),
        (padding_mask(minishare.tensor(PAD)), np_pad_mask(), None),
        (causal_mask(T), np.tril(np.ones((T, T), bool))[None, None], None),
        (padding_mask(minishare.tensor(MEMORY_PAD)), MEMORY_PAD.astype(bool)[:, None, None, :], memory),
    ]
    for mask, np_mask, context in cases:
        out = mha(leaf(x, False), mask=mask, context=None if context is None else leaf(context, False))
        np.testing.assert_allclose(host(out), np_attention(mha, x, np_mask, context), rtol=1e-10, atol=1e-12)


def test_attention_masked_key_gets_zero_weight():
    """A padded key contributes nothing: changing its vector leaves every output unchanged."""
    minishare.manual_seed(0)
    mha = perturb(MultiHeadAttention(H, HEADS).double())
    x = randn(B, T, H, seed=1)
    moved = x.copy()
    moved[0, 3] += 5.0                      # the pad of sequence 0 (as a key, and as a query)
    mask = padding_mask(minishare.tensor(PAD))
    a, b = host(mha(leaf(x, False), mask)), host(mha(leaf(moved, False), mask))
    np.testing.assert_allclose(a[0, :3], b[0, :3], rtol=0, atol=1e-12)
    assert np.abs(a[0, 3] - b[0, 3]).max() > 1e-3      # its own query does change


@pytest.mark.parametrize("act", ["gelu_new", "gelu", "relu", "tanh"])
def test_ffn_matches_numpy(act):
    minishare.manual_seed(0)
    ffn = perturb(FFN(H, INNER, act).double())
    x = randn(B, T, H, seed=3)
    np.testing.assert_allclose(host(ffn(leaf(x, False))), np_ffn(ffn, x, act), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_residual_is_post_ln_or_pre_ln(norm):
    """Post-LN: LN(x + f(x)); Pre-LN: x + f(LN(x)) (Xiong et al., 2020)."""
    minishare.manual_seed(0)
    res = perturb(Residual(FFN(H, INNER, "gelu_new"), H, norm, 0.0, EPS).double())
    x = randn(B, T, H, seed=4)
    expected = np_residual(res, lambda z: np_ffn(res.sublayer, z), x, norm)
    np.testing.assert_allclose(host(res(leaf(x, False))), expected, rtol=1e-9, atol=1e-12)


def test_component_errors_name_the_problem():
    with pytest.raises(ValueError, match="num_attention_heads=3 must divide hidden_size=8"):
        MultiHeadAttention(8, 3)
    with pytest.raises(ValueError, match="hidden_act must be one of .*got 'swish'"):
        FFN(8, 16, "swish")
    with pytest.raises(ValueError, match="norm_position must be 'post' or 'pre', got 'middle'"):
        Residual(FFN(8, 16, "relu"), 8, "middle", 0.0, EPS)
    with pytest.raises(ValueError, match="norm_position"):
        encoder(Plan.build("all-shared", 2), 8, 2, 16, "relu", "sandwich")


# ==================================================== the stacks against NumPy, set by set
@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("case", list(ENCODER_PLANS))
def test_encoder_matches_numpy_with_hand_written_schedule(case, norm):
    """Position i runs the set the paper's letters name; a wrong set (they differ after
    ``perturb``) changes the output."""
    sharing, N, M, schedule = ENCODER_PLANS[case]
    stack = make_encoder(sharing, N, M, norm)
    assert len(stack.attention_sets) == len(set(schedule["attention"]))
    assert len(stack.ffn_sets) == len(set(schedule["ffn"]))
    x = randn(B, T, H, seed=5)
    out = stack(leaf(x, False), encoder_inputs())
    expected = np_stack(stack, x, {c: letters(s) for c, s in schedule.items()}, norm,
                        {"attention": np_pad_mask()})
    np.testing.assert_allclose(host(out), expected, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("case", list(DECODER_PLANS))
def test_decoder_matches_numpy_with_hand_written_schedule(case, norm):
    sharing, N, M, schedule = DECODER_PLANS[case]
    stack = make_decoder(sharing, N, M, norm)
    x, memory = randn(B, T, H, seed=6), randn(B, S, H, seed=7)
    out = stack(leaf(x, False), decoder_inputs(leaf(memory, False)))
    masks = {"attention": np.tril(np.ones((T, T), bool))[None, None],
             "cross_attention": MEMORY_PAD.astype(bool)[:, None, None, :]}
    expected = np_stack(stack, x, {c: letters(s) for c, s in schedule.items()}, norm, masks, memory)
    np.testing.assert_allclose(host(out), expected, rtol=1e-9, atol=1e-10)


def test_hidden_states_are_the_inputs_and_outputs_of_each_layer():
    stack = make_encoder("cycle-rev", 4, 2)
    x = randn(B, T, H, seed=8)
    out, states = stack(leaf(x, False), encoder_inputs(), output_hidden_states=True)
    assert len(states) == 5
    np.testing.assert_array_equal(host(states[0]), x)
    np.testing.assert_array_equal(host(states[-1]), host(out))     # Post-LN: no final norm
    one_layer = np_stack(stack, x, {"attention": [0], "ffn": [0]}, "post", {"attention": np_pad_mask()})
    np.testing.assert_allclose(host(states[1]), one_layer, rtol=1e-9, atol=1e-10)


# ============================================ shared positions run the very same objects
def trace_sets(stack):
    """Run-time log of the Residual objects the stack calls, in call order: independent of how
    the stack looks sets up. Returns the list the next forward pass fills."""
    calls = []
    for residual in stack.modules():
        if isinstance(residual, Residual):
            original = type(residual).forward.__get__(residual)
            object.__setattr__(residual, "forward",
                               lambda *a, _f=original, _r=residual, **k: calls.append(_r) or _f(*a, **k))
    return calls


def check_identity(calls, schedule):
    """Positions whose letters agree called one object with one set of tensors; positions whose
    letters differ share no tensor at all."""
    components = list(schedule)
    N = len(schedule[components[0]])
    assert len(calls) == N * len(components)
    for c_index, component in enumerate(components):
        used = calls[c_index::len(components)]                     # the object at each position
        for i in range(N):
            for j in range(N):
                same = schedule[component][i] == schedule[component][j]
                assert (used[i] is used[j]) == same, (component, i, j)
                ids_i = {id(p) for p in used[i].parameters()}
                ids_j = {id(p) for p in used[j].parameters()}
                assert (ids_i == ids_j) if same else not (ids_i & ids_j), (component, i, j)


@pytest.mark.parametrize("case", list(ENCODER_PLANS))
def test_encoder_shared_positions_hold_the_same_tensors(case):
    sharing, N, M, schedule = ENCODER_PLANS[case]
    stack = make_encoder(sharing, N, M)
    calls = trace_sets(stack)
    stack(leaf(randn(B, T, H), False), encoder_inputs())
    check_identity(calls, schedule)


@pytest.mark.parametrize("case", list(DECODER_PLANS))
def test_decoder_shared_positions_hold_the_same_tensors(case):
    sharing, N, M, schedule = DECODER_PLANS[case]
    stack = make_decoder(sharing, N, M)
    calls = trace_sets(stack)
    stack(leaf(randn(B, T, H), False), decoder_inputs(leaf(randn(B, S, H), False)))
    check_identity(calls, schedule)


def test_cycle_rev_first_and_last_position_share_attention():
    """Takase & Kiyono's example: Cycle (rev), M = 3, N = 6 is A B C C B A."""
    stack = make_encoder("cycle-rev", 6, 3)
    calls = trace_sets(stack)
    stack(leaf(randn(B, T, H), False), encoder_inputs())
    attention = calls[0::2]
    assert attention[0] is attention[5]
    assert attention[0].sublayer.query.weight is attention[5].sublayer.query.weight
    assert attention[0] is not attention[1]
    assert attention[0].sublayer.query.weight is not attention[1].sublayer.query.weight
    assert attention[2] is attention[3] and attention[1] is attention[4]


# ============================ a shared weight's gradient is the sum over the positions using it
def check_summed_gradients(shared, unshared, schedules):
    """grad(shared set k) == Σ over positions i with letter k of grad(unshared position i)."""
    grads = {name: host(p.grad) for name, p in unshared.named_parameters()}
    checked = 0
    for name, p in shared.named_parameters():
        m = SET_NAME.match(name)
        if m is None:
            expected = grads[name]
        else:
            schedule = letters(schedules[m["prefix"]][m["component"]])
            k = int(m["index"])
            positions = [i for i, s in enumerate(schedule) if s == k]
            expected = sum(grads[f"{m['prefix']}{m['component']}_sets.{i}.{m['rest']}"] for i in positions)
            checked += len(positions) > 1
        assert p.grad is not None, name
        np.testing.assert_allclose(host(p.grad), expected, rtol=1e-9, atol=1e-12, err_msg=name)
    return checked


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("case", ["all-shared", "cycle-rev-2-4", "shared-ffn"])
def test_encoder_shared_gradient_is_the_sum_over_positions(case, norm):
    sharing, N, M, schedule = ENCODER_PLANS[case]
    shared = make_encoder(sharing, N, M, norm)
    unshared = make_encoder("not-shared", N, None, norm, seed=9)
    unshare(shared, unshared, {"": schedule})
    x, v = randn(B, T, H, seed=10), randn(B, T, H, seed=11)
    outs = [model(leaf(x, False), encoder_inputs()) for model in (shared, unshared)]
    np.testing.assert_allclose(host(outs[0]), host(outs[1]), rtol=1e-12, atol=1e-12)
    for out in outs:
        out.backward(v)
    assert check_summed_gradients(shared, unshared, {"": schedule}) > 0


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("case", ["all-shared", "cycle-rev-2-4", "explicit-dict"])
def test_decoder_shared_gradient_is_the_sum_over_positions(case, norm):
    sharing, N, M, schedule = DECODER_PLANS[case]
    shared = make_decoder(sharing, N, M, norm)
    unshared = make_decoder("not-shared", N, None, norm, seed=9)
    unshare(shared, unshared, {"": schedule})
    x, memory, v = randn(B, T, H, seed=12), randn(B, S, H, seed=13), randn(B, T, H, seed=14)
    memories = [leaf(memory), leaf(memory)]
    outs = [model(leaf(x, False), decoder_inputs(mem)) for model, mem in zip((shared, unshared), memories)]
    for out in outs:
        out.backward(v)
    assert check_summed_gradients(shared, unshared, {"": schedule}) > 0
    # the encoder output (memory) feeds every position's cross-attention: its gradient agrees too
    np.testing.assert_allclose(host(memories[0].grad), host(memories[1].grad), rtol=1e-9, atol=1e-12)


# ====================================================== finite differences, whole stacks
# gradcheck costs two forward passes per checked element: small N, and a few small tensors (each
# used at several positions) besides the one weight matrix per test.
GRADCHECK_PLANS = {
    "not-shared": ("not-shared", 2, None),
    "all-shared": ("all-shared", 3, None),
    "cycle-rev-2-3": ("cycle-rev", 3, 2),           # A B B
    "explicit": ([0, 1, 0], 3, None),
}


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("case", list(GRADCHECK_PLANS))
def test_encoder_stack_gradcheck(case, norm):
    stack = make_encoder(*GRADCHECK_PLANS[case], norm)
    x = leaf(randn(B, T, H, seed=15))
    params = [stack.attention_sets[0].sublayer.value.weight,       # used at several positions
              stack.ffn_sets[len(stack.ffn_sets) - 1].LayerNorm.weight,
              stack.ffn_sets[0].sublayer.ffn.bias]
    minishare.gradcheck(lambda *_: stack(x, encoder_inputs()), x, *params,
                        names=["x", "value.weight", "ffn LayerNorm.weight", "ffn.bias"])


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("case", list(GRADCHECK_PLANS))
def test_decoder_stack_with_cross_attention_gradcheck(case, norm):
    stack = make_decoder(*GRADCHECK_PLANS[case], norm)
    x, memory = leaf(randn(B, T, H, seed=16), False), leaf(randn(B, S, H, seed=17))
    params = [stack.cross_attention_sets[0].sublayer.value.bias,
              stack.cross_attention_sets[0].sublayer.query.bias,
              stack.attention_sets[0].sublayer.dense.bias,
              stack.cross_attention_sets[len(stack.cross_attention_sets) - 1].LayerNorm.weight]
    minishare.gradcheck(lambda *_: stack(x, decoder_inputs(memory)), memory, *params,
                        names=["memory", "cross value.bias", "cross query.bias", "self dense.bias",
                               "cross LayerNorm.weight"])


# ================================================================================ masks
@pytest.mark.parametrize("norm", ["post", "pre"])
def test_decoder_stack_never_looks_ahead(norm):
    stack = make_decoder("cycle-rev", 4, 2, norm)
    memory = leaf(randn(B, S, H, seed=18), False)
    x = randn(B, T, H, seed=19)
    base = host(stack(leaf(x, False), decoder_inputs(memory)))
    for t in range(1, T):
        moved = x.copy()
        moved[:, t:] += randn(B, T - t, H, seed=20 + t)
        out = host(stack(leaf(moved, False), decoder_inputs(memory)))
        np.testing.assert_allclose(out[:, :t], base[:, :t], rtol=0, atol=1e-12)
        assert np.abs(out[:, t:] - base[:, t:]).max() > 1e-3


def test_causal_mask_is_lower_triangular():
    expected = np.array([[1, 0, 0], [1, 1, 0], [1, 1, 1]], bool)[None, None]
    np.testing.assert_array_equal(host(causal_mask(3)), expected)


# ============================================ Universal Transformer: the timestep signal
def test_timestep_signal_matches_dehghani_formula():
    for t in (0, 1, 3):
        np.testing.assert_allclose(host(timestep_signal(t, 5, H, np.float64)),
                                   np_timestep_signal(t, 5, H), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_timestep_signal_is_added_before_every_step(norm):
    on = make_encoder("universal", 3, None, norm, timestep=True)
    off = make_encoder("universal", 3, None, norm, timestep=False)
    off.load_state_dict({k: host(v) for k, v in on.state_dict().items()})
    x = randn(B, T, H, seed=21)
    out_on, out_off = (host(s(leaf(x, False), encoder_inputs())) for s in (on, off))
    schedule = {"attention": [0, 0, 0], "ffn": [0, 0, 0]}
    masks = {"attention": np_pad_mask()}
    np.testing.assert_allclose(out_on, np_stack(on, x, schedule, norm, masks, timestep=True),
                               rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(out_off, np_stack(on, x, schedule, norm, masks), rtol=1e-9, atol=1e-10)
    assert np.abs(out_on - out_off).max() > 1e-2


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_timestep_signal_reaches_the_decoder(norm):
    on = make_decoder("universal", 3, None, norm, timestep=True)
    off = make_decoder("universal", 3, None, norm)
    off.load_state_dict({k: host(v) for k, v in on.state_dict().items()})
    x, memory = randn(B, T, H, seed=22), randn(B, S, H, seed=23)
    out_on, out_off = (host(s(leaf(x, False), decoder_inputs(leaf(memory, False)))) for s in (on, off))
    masks = {"attention": np.tril(np.ones((T, T), bool))[None, None],
             "cross_attention": MEMORY_PAD.astype(bool)[:, None, None, :]}
    schedule = {c: letters("AAA") for c in ("attention", "cross_attention", "ffn")}
    np.testing.assert_allclose(out_on, np_stack(on, x, schedule, norm, masks, memory, timestep=True),
                               rtol=1e-9, atol=1e-10)
    assert np.abs(out_on - out_off).max() > 1e-2


def test_with_the_timestep_signal_one_shared_layer_sees_a_different_input_at_every_step():
    """A state that the shared layer maps to itself would give the same input at every step; the
    coordinate embedding tells the steps apart: the layer's input at step t is the state plus
    the position and timestep sinusoids of t (Dehghani et al., Sec. 2.1)."""
    stack = make_encoder("universal", 3, None, "post", timestep=True)
    seen = []
    attention = stack.attention_sets[0]
    original = attention.forward
    attention.forward = lambda x, **kw: seen.append(host(x)) or original(x, **kw)
    x = randn(B, T, H, seed=24)
    _, states = stack(leaf(x, False), encoder_inputs(), output_hidden_states=True)
    assert len(seen) == 3
    for t in range(3):
        np.testing.assert_allclose(seen[t], host(states[t]) + np_timestep_signal(t, T, H), rtol=1e-12, atol=1e-12)
    steps = [np_timestep_signal(t, T, H) for t in range(3)]
    assert min(np.abs(steps[a] - steps[b]).max() for a in range(3) for b in range(a + 1, 3)) > 1e-3


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_decoder_stack_with_timestep_signal_gradcheck(norm):
    stack = make_decoder("universal", 3, None, norm, timestep=True)
    x, memory = leaf(randn(B, T, H, seed=25)), leaf(randn(B, S, H, seed=26))
    params = [stack.attention_sets[0].sublayer.value.bias, stack.ffn_sets[0].LayerNorm.weight]
    minishare.gradcheck(lambda *_: stack(x, decoder_inputs(memory)), x, memory, *params,
                        names=["x", "memory", "attention value.bias", "ffn LayerNorm.weight"])


# ================================================= inputs: a component left out has none
def test_a_component_without_inputs_gets_none():
    """An encoder given no masks is the encoder with every position visible: leaving out a
    component's inputs (or all of them) means "no extra arguments", not a KeyError."""
    stack = make_encoder("cycle-rev", 4, 2)
    x = leaf(randn(B, T, H, seed=11), False)
    everything = minishare.tensor(np.ones((B, T)))
    expected = host(stack(x, {"attention": {"mask": padding_mask(everything)}, "ffn": {}}))
    np.testing.assert_allclose(host(stack(x)), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(host(stack(x, {"attention": {}})), expected, rtol=1e-12, atol=1e-12)


def test_inputs_for_a_component_the_stack_lacks_are_refused():
    stack = make_encoder("all-shared", 2)
    with pytest.raises(ValueError, match="inputs for 'cross_attention'.*attention, ffn"):
        stack(leaf(randn(B, T, H), False), {"cross_attention": {"mask": None}})
