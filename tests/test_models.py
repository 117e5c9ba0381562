"""The models (``minishare.models``): ALBERT for pre-training, the encoder-decoder and the decoder-only
LM, checked against finite differences, unshared copies, NumPy written out here, and the papers'
definitions. Tiny sizes throughout: V = 11, E = 4, H = 8, 2 heads, T = 4.

Which set serves which position is written by hand as letters (Cycle (rev), M = 2, N = 4: "ABBA"),
never read back from the plan under test.
"""

import numpy as np
import pytest

import minishare
from minishare import backend, functional as F
from minishare.models import (AlbertConfig, AlbertForPreTraining, AlbertModel, DecoderLM,
                              EncoderDecoderModel, TransformerConfig)
from minishare.analysis import count_parameters
from minishare.nn import Residual
from conftest import SET_NAME, letters, unshare  # noqa: E402

V, E, H, HEADS, INNER, T = 11, 4, 8, 2, 16, 4


# --- helpers --------------------------------------------------------------------------------------
def host(x):
    return x.numpy() if isinstance(x, minishare.Tensor) else backend.to_numpy(x)


def ids(array):
    return minishare.tensor(np.asarray(array, dtype=np.int64))


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def albert_config(**overrides):
    fields = dict(vocab_size=V, embedding_size=E, hidden_size=H, num_hidden_layers=3,
                  num_attention_heads=HEADS, intermediate_size=INNER, max_position_embeddings=8)
    return AlbertConfig(**{**fields, **overrides})


def transformer_config(**overrides):
    fields = dict(vocab_size=V, embedding_size=E, hidden_size=H, num_hidden_layers=3,
                  num_attention_heads=HEADS, intermediate_size=INNER, max_position_embeddings=8,
                  hidden_act="gelu_new")
    return TransformerConfig(**{**fields, **overrides})


def perturb(model, seed=1, scale=0.3):
    """Move every parameter off its initial value (LayerNorms start at 1 and 0, biases at 0), in
    place, so that no wrongly wired bias or norm can hide; identities are kept."""
    rng = np.random.default_rng(seed)
    for p in model.parameters():
        p.data = backend.asarray(host(p) + scale * rng.standard_normal(p.shape)).astype(p.dtype)
    return model


def build(cls, config, seed=0):
    minishare.manual_seed(seed)
    return perturb(cls(config).double(), seed=seed + 1)


def copy_weights(source, target):
    target.load_state_dict({k: host(v) for k, v in source.state_dict().items()})


ID_BATCH = np.array([[2, 5, 7, 1], [3, 3, 9, 10]])          # (B, T)
MASK = np.array([[1, 1, 1, 0], [1, 1, 1, 1]])               # sequence 0 ends in one pad
TOKEN_TYPES = np.array([[0, 0, 1, 1], [0, 1, 1, 1]])
MLM_LABELS = np.array([[-100, 4, -100, -100], [6, -100, -100, 0]])
SOP_LABELS = np.array([0, 1])
MASKED = np.array([1, 4, 7])                                 # flat b*T + t of MLM_LABELS' labels


def albert_forward(model, **kwargs):
    return model(ids(ID_BATCH), attention_mask=ids(MASK), token_type_ids=ids(TOKEN_TYPES), **kwargs)


def pretraining_losses(model):
    """Every term of ALBERT's pre-training loss as one vector: the MLM cross-entropy of each token
    (0 where the label is -100) and the SOP cross-entropy of each example. gradcheck contracts it
    with a random vector, which checks more than the scalar mean does."""
    out = albert_forward(model)
    mlm = F.cross_entropy(out.prediction_logits.reshape(-1, V), ids(MLM_LABELS.reshape(-1)),
                          reduction="none")
    sop = F.cross_entropy(out.sop_logits, ids(SOP_LABELS), reduction="none")
    return F.concatenate([mlm, sop])


# --- plans as the papers write them -----------------------------------------------------------------
ALBERT_VARIANTS = {   # (sharing, N, M, letters per component)
    "not-shared": ("not-shared", 4, None, {"attention": "ABCD", "ffn": "ABCD"}),
    "all-shared": ("all-shared", 4, None, {"attention": "AAAA", "ffn": "AAAA"}),
    "shared-attention": ("shared-attention", 4, None, {"attention": "AAAA", "ffn": "ABCD"}),
    "shared-ffn": ("shared-ffn", 4, None, {"attention": "ABCD", "ffn": "AAAA"}),
    "universal": ("universal", 4, None, {"attention": "AAAA", "ffn": "AAAA"}),
    "sequence-3-6": ("sequence", 6, 3, {"attention": "AABBCC", "ffn": "AABBCC"}),
    "cycle-3-6": ("cycle", 6, 3, {"attention": "ABCABC", "ffn": "ABCABC"}),
    "cycle-rev-3-6": ("cycle-rev", 6, 3, {"attention": "ABCCBA", "ffn": "ABCCBA"}),
}


def trace_sets(model):
    """Log, in call order, the Residual objects (one component's parameter set) a forward pass
    runs; the log is filled at run time, independently of how the stack looks sets up."""
    calls = []
    for residual in model.modules():
        if isinstance(residual, Residual):
            original = type(residual).forward.__get__(residual)
            object.__setattr__(residual, "forward",
                               lambda *a, _f=original, _r=residual, **k: calls.append(_r) or _f(*a, **k))
    return calls


def check_identity(calls, schedule):
    components = list(schedule)
    N = len(schedule[components[0]])
    assert len(calls) == N * len(components)
    for c_index, component in enumerate(components):
        used = calls[c_index::len(components)]
        for i in range(N):
            for j in range(N):
                same = schedule[component][i] == schedule[component][j]
                assert (used[i] is used[j]) == same, (component, i, j)
                ids_i = {id(p) for p in used[i].parameters()}
                ids_j = {id(p) for p in used[j].parameters()}
                assert (ids_i == ids_j) if same else not (ids_i & ids_j), (component, i, j)


# ===================================== shared positions hold the very same tensors
@pytest.mark.parametrize("case", list(ALBERT_VARIANTS))
def test_albert_shared_positions_hold_the_same_tensors(case):
    sharing, N, M, schedule = ALBERT_VARIANTS[case]
    model = AlbertModel(albert_config(sharing=sharing, num_hidden_layers=N, num_unique_layers=M))
    calls = trace_sets(model)
    albert_forward(model)
    check_identity(calls, schedule)


def test_cycle_rev_first_and_last_layer_are_one_attention():
    """Takase & Kiyono's Cycle (rev), M = 3, N = 6: A B C C B A."""
    model = AlbertModel(albert_config(sharing="cycle-rev", num_hidden_layers=6, num_unique_layers=3))
    calls = trace_sets(model)
    albert_forward(model)
    attention = calls[0::2]
    assert attention[0] is attention[5]
    assert attention[0].sublayer.query.weight is attention[5].sublayer.query.weight
    assert attention[0] is not attention[1]
    assert attention[0].sublayer.query.weight is not attention[1].sublayer.query.weight


def sgd_step(model, lr):
    """A plain SGD update through ``p.data`` (no optimizer object): what the identity test falls
    back on without ``minishare.optim``."""
    for p in model.parameters():
        if p.grad is not None:
            p.data = p.data - lr * p.grad


@pytest.mark.parametrize("case", ["all-shared", "cycle-rev-3-6", "shared-ffn"])
def test_shared_tensors_stay_one_after_a_manual_sgd_step(case):
    sharing, N, M, schedule = ALBERT_VARIANTS[case]
    model = AlbertForPreTraining(albert_config(sharing=sharing, num_hidden_layers=N, num_unique_layers=M))
    before = [id(p) for p in model.parameters()]
    albert_forward(model, labels=ids(MLM_LABELS), sentence_order_label=ids(SOP_LABELS)).loss.backward()
    sgd_step(model, 0.1)
    assert [id(p) for p in model.parameters()] == before
    calls = trace_sets(model)
    albert_forward(model)
    check_identity(calls, schedule)


@pytest.mark.parametrize("case", ["all-shared", "cycle-rev-3-6"])
def test_shared_tensors_stay_one_and_move_once_after_an_adamw_step(case):
    optim = pytest.importorskip("minishare.optim", reason="minishare.optim not present yet: "
                                "test_shared_tensors_stay_one_after_a_manual_sgd_step covers identity")
    sharing, N, M, schedule = ALBERT_VARIANTS[case]
    model = AlbertForPreTraining(albert_config(sharing=sharing, num_hidden_layers=N, num_unique_layers=M))
    model.double()
    before = [id(p) for p in model.parameters()]
    albert_forward(model, labels=ids(MLM_LABELS), sentence_order_label=ids(SOP_LABELS)).loss.backward()
    query = model.albert.encoder.attention_sets[0].sublayer.query.weight     # used at >= 2 positions
    old, g = host(query).copy(), host(query.grad).copy()
    word = model.albert.embeddings.word_embeddings.weight                   # also the MLM decoder
    old_word, g_word = host(word).copy(), host(word.grad).copy()
    lr, eps = 1e-3, 1e-8
    every_name = [p for _, p in model.named_parameters(remove_duplicate=False)]   # tied one twice
    optim.AdamW(every_name, lr=lr, betas=(0.9, 0.999), eps=eps, weight_decay=0.0).step()
    # Adam's first step (Kingma & Ba, Alg. 1): m̂ = g, v̂ = g², so p moves by lr·g/(|g| + ε), once;
    # stepping once per *use* would move a shared weight two or more times as far.
    np.testing.assert_allclose(host(query), old - lr * g / (np.abs(g) + eps), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(host(word), old_word - lr * g_word / (np.abs(g_word) + eps),
                               rtol=1e-10, atol=1e-14)
    assert [id(p) for p in model.parameters()] == before
    calls = trace_sets(model)
    albert_forward(model)
    check_identity(calls, schedule)


# ============================ a shared weight's gradient is the sum over the positions using it
def check_summed_gradients(shared, unshared, schedules):
    grads = {name: host(p.grad) for name, p in unshared.named_parameters()}
    summed = 0
    for name, p in shared.named_parameters():
        m = SET_NAME.match(name)
        if m is None:
            expected = grads[name]
        else:
            schedule = letters(schedules[m["prefix"]][m["component"]])
            positions = [i for i, s in enumerate(schedule) if s == int(m["index"])]
            expected = sum(grads[f"{m['prefix']}{m['component']}_sets.{i}.{m['rest']}"] for i in positions)
            summed += len(positions) > 1
        assert p.grad is not None, name
        np.testing.assert_allclose(host(p.grad), expected, rtol=1e-9, atol=1e-12, err_msg=name)
    return summed


def backward_with_random_cotangent(outputs, seed=0):
    for i, out in enumerate(outputs):     # the outputs share a graph: keep it for the next one
        out.backward(randn(*out.shape, seed=seed + i), retain_graph=i < len(outputs) - 1)


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("sharing, M, schedule", [
    pytest.param("all-shared", None, {"attention": "AAAA", "ffn": "AAAA"}, id="all-shared"),
    pytest.param("cycle-rev", 2, {"attention": "ABBA", "ffn": "ABBA"}, id="cycle-rev-2-4"),
])
def test_albert_shared_gradient_is_the_sum_over_positions(sharing, M, schedule, norm):
    shared = build(AlbertForPreTraining, albert_config(sharing=sharing, num_hidden_layers=4,
                                                       num_unique_layers=M, norm_position=norm))
    unshared = build(AlbertForPreTraining, albert_config(sharing="not-shared", num_hidden_layers=4,
                                                         norm_position=norm), seed=7)
    schedules = {"albert.encoder.": schedule}
    unshare(shared, unshared, schedules)
    outs = [albert_forward(m) for m in (shared, unshared)]
    np.testing.assert_allclose(host(outs[0].prediction_logits), host(outs[1].prediction_logits),
                               rtol=1e-12, atol=1e-12)
    for out in outs:
        backward_with_random_cotangent([out.prediction_logits, out.sop_logits])
    assert check_summed_gradients(shared, unshared, schedules) > 0


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("sharing, M, schedule", [
    pytest.param("all-shared", None, {c: "AAAA" for c in ("attention", "cross_attention", "ffn")},
                 id="all-shared"),
    pytest.param("cycle-rev", 2, {c: "ABBA" for c in ("attention", "cross_attention", "ffn")},
                 id="cycle-rev-2-4"),
])
def test_encoder_decoder_shared_gradient_is_the_sum_over_positions(sharing, M, schedule, norm):
    config = dict(num_hidden_layers=4, norm_position=norm)
    shared = build(EncoderDecoderModel, transformer_config(sharing=sharing, num_unique_layers=M, **config))
    unshared = build(EncoderDecoderModel, transformer_config(sharing="not-shared", **config), seed=7)
    schedules = {"encoder.": schedule, "decoder.": schedule}
    unshare(shared, unshared, schedules)
    for model in (shared, unshared):
        out = model(ids(ID_BATCH[:, :3]), ids(ID_BATCH), attention_mask=ids(MASK[:, 1:]))
        backward_with_random_cotangent([out.logits])
    assert check_summed_gradients(shared, unshared, schedules) > 0


# ============================================ finite differences on whole tiny models
GRADCHECK_PLANS = {   # plan -> config fields
    "not-shared": dict(sharing="not-shared", num_hidden_layers=2),
    "all-shared": dict(sharing="all-shared", num_hidden_layers=3),
    "cycle-rev-2-3": dict(sharing="cycle-rev", num_hidden_layers=3, num_unique_layers=2),   # A B B
    "explicit": dict(sharing=[0, 1, 0], num_hidden_layers=3),
}


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("plan", list(GRADCHECK_PLANS))
def test_albert_for_pretraining_gradcheck(plan, norm):
    model = build(AlbertForPreTraining, albert_config(norm_position=norm, **GRADCHECK_PLANS[plan]))
    params = {
        "word_embeddings (tied to the MLM decoder)": model.albert.embeddings.word_embeddings.weight,
        "attention set 0 query.weight": model.albert.encoder.attention_sets[0].sublayer.query.weight,
        "ffn set 0 LayerNorm.bias": model.albert.encoder.ffn_sets[0].LayerNorm.bias,
        "token_type_embeddings": model.albert.embeddings.token_type_embeddings.weight,
    }
    minishare.gradcheck(lambda *_: pretraining_losses(model), *params.values(), names=list(params))


@pytest.mark.parametrize("positions", [None, MASKED], ids=["full-logits", "mlm_positions"])
@pytest.mark.parametrize("norm", ["post", "pre"])
def test_albert_pretraining_scalar_loss_gradcheck(norm, positions):
    """The model's own ``loss`` (MLM mean over labelled tokens + SOP mean), as training uses it,
    with the MLM head at every position or at the masked ones only."""
    model = build(AlbertForPreTraining, albert_config(norm_position=norm, **GRADCHECK_PLANS["cycle-rev-2-3"]))
    params = {"word_embeddings": model.albert.embeddings.word_embeddings.weight,
              "ffn set 1 ffn.weight": model.albert.encoder.ffn_sets[1].sublayer.ffn.weight,
              "predictions.dense.weight": model.predictions.dense.weight}
    gathered = {} if positions is None else {"mlm_positions": ids(positions)}
    minishare.gradcheck(lambda *_: albert_forward(model, labels=ids(MLM_LABELS),
                                                  sentence_order_label=ids(SOP_LABELS), **gathered).loss,
                        *params.values(), names=list(params))


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("plan", list(GRADCHECK_PLANS))
def test_decoder_lm_gradcheck(plan, norm):
    model = build(DecoderLM, transformer_config(norm_position=norm, **GRADCHECK_PLANS[plan]))
    params = {
        "word_embeddings (tied to the output)": model.embeddings.word_embeddings.weight,
        "output dense (H -> E)": model.lm_head.dense.weight,
        "attention set 0 value.bias": model.decoder.attention_sets[0].sublayer.value.bias,
        "ffn set 0 ffn_output.bias": model.decoder.ffn_sets[0].sublayer.ffn_output.bias,
    }
    minishare.gradcheck(lambda *_: model(ids(ID_BATCH)).logits, *params.values(), names=list(params))


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("plan", list(GRADCHECK_PLANS))
def test_encoder_decoder_gradcheck(plan, norm):
    model = build(EncoderDecoderModel, transformer_config(norm_position=norm, **GRADCHECK_PLANS[plan]))
    params = {
        "word_embeddings (source, target and output)": model.embeddings.word_embeddings.weight,
        "encoder ffn set 0 ffn_output.bias": model.encoder.ffn_sets[0].sublayer.ffn_output.bias,
        "decoder cross-attention set 0 value.bias": model.decoder.cross_attention_sets[0].sublayer.value.bias,
        "decoder attention set 0 LayerNorm.weight": model.decoder.attention_sets[0].LayerNorm.weight,
    }
    src, src_mask = ids(ID_BATCH[:, :3]), ids(MASK[:, 1:])
    minishare.gradcheck(lambda *_: model(src, ids(ID_BATCH), attention_mask=src_mask).logits,
                        *params.values(), names=list(params))


# =========================================================== the losses, computed by hand
def np_cross_entropy(logits, labels):
    keep = labels != -100
    z = logits[keep] - logits[keep].max(-1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return -log_p[np.arange(keep.sum()), labels[keep]].mean()


def test_pretraining_loss_is_mlm_plus_sop_cross_entropy():
    model = build(AlbertForPreTraining, albert_config())
    out = albert_forward(model, labels=ids(MLM_LABELS), sentence_order_label=ids(SOP_LABELS))
    mlm = np_cross_entropy(host(out.prediction_logits).reshape(-1, V), MLM_LABELS.reshape(-1))
    sop = np_cross_entropy(host(out.sop_logits), SOP_LABELS)
    np.testing.assert_allclose(float(host(out.mlm_loss)), mlm, rtol=1e-6)
    np.testing.assert_allclose(float(host(out.sop_loss)), sop, rtol=1e-6)
    np.testing.assert_allclose(float(host(out.loss)), mlm + sop, rtol=1e-6)


def test_mlm_head_at_the_masked_positions_only_gives_the_same_loss():
    """ALBERT's reference runs the MLM head on the masked positions alone: the loss is the
    full-logits cross-entropy over the labelled positions, computed here in NumPy."""
    model = build(AlbertForPreTraining, albert_config())
    full = albert_forward(model)                                         # no labels: (B, T, V)
    out = albert_forward(model, labels=ids(MLM_LABELS), sentence_order_label=ids(SOP_LABELS),
                         mlm_positions=ids(MASKED))
    assert out.prediction_logits.shape == (3, V)
    logits = host(full.prediction_logits)                                 # (B, T, V)
    np.testing.assert_allclose(host(out.prediction_logits),
                               np.stack([logits[0, 1], logits[1, 0], logits[1, 3]]), rtol=1e-10)
    mlm = np_cross_entropy(logits.reshape(-1, V), MLM_LABELS.reshape(-1))
    sop = np_cross_entropy(host(out.sop_logits), SOP_LABELS)
    np.testing.assert_allclose(float(host(out.mlm_loss)), mlm, rtol=1e-10)
    np.testing.assert_allclose(float(host(out.loss)), mlm + sop, rtol=1e-10)


@pytest.mark.parametrize("positions", [[1, 4], [1, 4, 7, 2], [4, 1, 7], [1, 4, 8], [1, 1, 4, 7]],
                         ids=["missing", "unlabelled", "unordered", "outside", "repeated"])
def test_mlm_positions_must_be_the_labelled_positions(positions):
    model = build(AlbertForPreTraining, albert_config())
    with pytest.raises((ValueError, IndexError), match="mlm_positions|out of bounds"):
        albert_forward(model, labels=ids(MLM_LABELS), mlm_positions=ids(positions))


def test_mlm_positions_without_labels_score_those_positions():
    model = build(AlbertForPreTraining, albert_config())
    logits = host(albert_forward(model).prediction_logits)
    some = host(albert_forward(model, mlm_positions=ids([0, 6])).prediction_logits)
    np.testing.assert_allclose(some, np.stack([logits[0, 0], logits[1, 2]]), rtol=1e-10)


def test_loss_of_a_float64_model_is_float64():
    """gradcheck of a scalar loss needs it: rounded to float32, finite differences of 1e-6 are noise.
    (Regression: ``backend.asarray`` used to turn the NumPy float64 *scalars* that NumPy's full
    reductions return into float32; the strict backend, returning 0-d arrays, hid it.)"""
    model = build(AlbertForPreTraining, albert_config())
    out = albert_forward(model, labels=ids(MLM_LABELS), sentence_order_label=ids(SOP_LABELS))
    assert out.prediction_logits.dtype == np.float64
    assert out.mlm_loss.dtype == np.float64
    assert out.loss.dtype == np.float64
    lm = build(DecoderLM, transformer_config())
    assert lm(ids(ID_BATCH), labels=ids(ID_BATCH)).loss.dtype == np.float64


def test_decoder_lm_loss_predicts_the_next_token():
    lm = build(DecoderLM, transformer_config())
    out = lm(ids(ID_BATCH), labels=ids(ID_BATCH))
    expected = np_cross_entropy(host(out.logits)[:, :-1].reshape(-1, V), ID_BATCH[:, 1:].reshape(-1))
    np.testing.assert_allclose(float(host(out.loss)), expected, rtol=1e-6)


# ========================================================================== masks
@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("sharing, M", [("cycle-rev", 2), ("not-shared", None)])
def test_decoder_lm_never_looks_ahead(sharing, M, norm):
    lm = build(DecoderLM, transformer_config(sharing=sharing, num_unique_layers=M, norm_position=norm))
    base = host(lm(ids(ID_BATCH)).logits)
    for t in range(1, T):
        changed = ID_BATCH.copy()
        changed[:, t:] = (changed[:, t:] + 1 + t) % V
        logits = host(lm(ids(changed)).logits)
        np.testing.assert_allclose(logits[:, :t], base[:, :t], rtol=0, atol=1e-12)
        assert np.abs(logits[:, t:] - base[:, t:]).max() > 1e-4


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_encoder_decoder_decoder_never_looks_ahead(norm):
    model = build(EncoderDecoderModel, transformer_config(sharing="cycle-rev", num_hidden_layers=3,
                                                          num_unique_layers=2, norm_position=norm))
    src, src_mask = ids(ID_BATCH[:, :3]), ids(MASK[:, 1:])
    base = host(model(src, ids(ID_BATCH), attention_mask=src_mask).logits)
    for t in range(1, T):
        changed = ID_BATCH.copy()
        changed[:, t] = (changed[:, t] + 3) % V
        logits = host(model(src, ids(changed), attention_mask=src_mask).logits)
        np.testing.assert_allclose(logits[:, :t], base[:, :t], rtol=0, atol=1e-12)
        assert np.abs(logits[:, t:] - base[:, t:]).max() > 1e-4


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_padding_token_does_not_change_real_positions(norm):
    model = build(AlbertModel, albert_config(sharing="cycle-rev", num_unique_layers=2, norm_position=norm))
    changed = ID_BATCH.copy()
    changed[0, 3] = (changed[0, 3] + 4) % V                     # the pad of sequence 0
    a, b = (model(ids(x), attention_mask=ids(MASK)) for x in (ID_BATCH, changed))
    np.testing.assert_allclose(host(b.last_hidden_state)[0, :3], host(a.last_hidden_state)[0, :3],
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(host(b.pooler_output), host(a.pooler_output), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(host(b.last_hidden_state)[1], host(a.last_hidden_state)[1])
    # without the mask the same change does reach the real positions: the test can fail
    a, b = (model(ids(x)) for x in (ID_BATCH, changed))
    assert np.abs(host(b.last_hidden_state)[0, :3] - host(a.last_hidden_state)[0, :3]).max() > 1e-4


# =================================================== factorized embedding and weight tying
def np_layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps) * w + b


def test_factorized_embedding_shapes_and_values():
    """ALBERT Sec. 3.1: V × E lookup, then an E × H projection (Lan et al., 2019)."""
    model = build(AlbertModel, albert_config())
    emb = model.embeddings
    assert emb.word_embeddings.weight.shape == (V, E)
    assert emb.position_embeddings.weight.shape == (8, E)
    assert emb.token_type_embeddings.weight.shape == (2, E)
    assert emb.embedding_hidden_mapping_in.weight.shape == (H, E)    # PyTorch layout (out, in)
    assert emb.embedding_hidden_mapping_in.bias.shape == (H,)
    x = (host(emb.word_embeddings.weight)[ID_BATCH] + host(emb.position_embeddings.weight)[:T]
         + host(emb.token_type_embeddings.weight)[TOKEN_TYPES])
    x = np_layer_norm(x, host(emb.LayerNorm.weight), host(emb.LayerNorm.bias), 1e-12)
    expected = x @ host(emb.embedding_hidden_mapping_in.weight).T + host(emb.embedding_hidden_mapping_in.bias)
    out = model(ids(ID_BATCH), token_type_ids=ids(TOKEN_TYPES), output_hidden_states=True)
    np.testing.assert_allclose(host(out.hidden_states[0]), expected, rtol=1e-10, atol=1e-12)


def test_e_equal_h_has_no_projection_as_in_bert():
    model = AlbertModel(albert_config(embedding_size=H, sharing="not-shared"))
    assert model.embeddings.word_embeddings.weight.shape == (V, H)
    assert model.embeddings.embedding_hidden_mapping_in is None
    assert not any("embedding_hidden_mapping_in" in name for name, _ in model.named_parameters())
    assert count_parameters(AlbertModel(albert_config(embedding_size=4))) != count_parameters(model)
    lm = DecoderLM(transformer_config(embedding_size=None))
    assert lm.embeddings.embedding_hidden_mapping_in is None and lm.lm_head.dense is None


def test_mlm_decoder_is_the_word_embedding_tensor():
    model = AlbertForPreTraining(albert_config())
    word = model.albert.embeddings.word_embeddings.weight
    assert model.predictions.decoder.weight is word
    assert model.predictions.decoder.bias.shape == (V,)
    assert model.shared_names()["albert.embeddings.word_embeddings.weight"] == [
        "albert.embeddings.word_embeddings.weight", "predictions.decoder.weight"]
    assert sum(p is word for p in model.parameters()) == 1                  # counted once
    untied = AlbertForPreTraining(albert_config(tie_word_embeddings=False))
    assert untied.predictions.decoder.weight is not untied.albert.embeddings.word_embeddings.weight
    assert untied.shared_names() == {}
    assert count_parameters(untied) - count_parameters(model) == V * E


@pytest.mark.parametrize("cls", ["albert", "lm", "seq2seq"])
def test_tied_gradient_is_the_sum_of_both_uses(cls):
    if cls == "albert":
        make = lambda tie: build(AlbertForPreTraining, albert_config(tie_word_embeddings=tie))
        word = lambda m: m.albert.embeddings.word_embeddings.weight
        out_name, out_weight = "predictions.decoder.weight", lambda m: m.predictions.decoder.weight
        run = lambda m: [albert_forward(m).prediction_logits]
    else:
        model_cls = DecoderLM if cls == "lm" else EncoderDecoderModel
        make = lambda tie: build(model_cls, transformer_config(tie_word_embeddings=tie))
        word = lambda m: m.embeddings.word_embeddings.weight
        out_name, out_weight = "lm_head.decoder.weight", lambda m: m.lm_head.decoder.weight
        run = (lambda m: [m(ids(ID_BATCH)).logits]) if cls == "lm" else \
            (lambda m: [m(ids(ID_BATCH[:, :3]), ids(ID_BATCH)).logits])
    tied, untied = make(True), make(False)
    assert out_weight(tied) is word(tied) and out_weight(untied) is not word(untied)
    state = {k: host(v) for k, v in tied.state_dict().items()}
    untied.load_state_dict(state)                      # both untied tensors get a copy of the table
    np.testing.assert_array_equal(host(out_weight(untied)), host(word(untied)))
    for model in (tied, untied):
        backward_with_random_cotangent(run(model), seed=3)
    np.testing.assert_allclose(host(word(tied).grad), host(word(untied).grad) + host(out_weight(untied).grad),
                               rtol=1e-10, atol=1e-13)
    assert np.abs(host(out_weight(untied).grad)).max() > 0 and np.abs(host(word(untied).grad)).max() > 0
    assert out_name in dict(tied.named_parameters(remove_duplicate=False))


# ========================================================================= config errors
@pytest.mark.parametrize("overrides, match", [
    (dict(sharing="cycle", num_hidden_layers=3, num_unique_layers=4), r"num_unique_layers.*1 <= n_unique"),
    (dict(sharing="cycle", num_hidden_layers=3, num_unique_layers=0), r"num_unique_layers"),
    (dict(num_attention_heads=3), r"num_attention_heads=3 must divide hidden_size=8"),
    (dict(sharing="zigzag"), r"sharing strategy 'zigzag'"),
    (dict(hidden_act="swish"), r"hidden_act must be one of .*'swish'"),
    (dict(norm_position="middle"), r"norm_position must be 'post' or 'pre', got 'middle'"),
    (dict(hidden_size=0), r"hidden_size must be a positive int"),
    (dict(hidden_dropout_prob=1.0), r"hidden_dropout_prob must lie in \[0, 1\)"),
    (dict(sharing="sequence", num_hidden_layers=3, num_unique_layers=2), r"sequence needs n_unique to divide"),
])
def test_albert_config_errors_name_the_field(overrides, match):
    with pytest.raises(ValueError, match=match):
        albert_config(**overrides)


@pytest.mark.parametrize("overrides, match", [
    (dict(sharing="cycle-rev", num_unique_layers=5), r"num_unique_layers"),
    (dict(num_attention_heads=5), r"num_attention_heads=5 must divide hidden_size=8"),
    (dict(sharing="spiral"), r"sharing strategy 'spiral'"),
    (dict(hidden_act="mish"), r"hidden_act"),
    (dict(norm_position=None), r"norm_position"),
])
def test_transformer_config_errors_name_the_field(overrides, match):
    with pytest.raises(ValueError, match=match):
        transformer_config(**overrides)


def test_plan_errors_raised_from_a_config_name_its_fields():
    """The plan speaks of n_unique and n_layers; a config's user set num_unique_layers."""
    with pytest.raises(ValueError, match="num_unique_layers"):
        albert_config(sharing="cycle", num_unique_layers=None)
    with pytest.raises(ValueError, match="num_unique_layers"):
        albert_config(sharing="all-shared", num_unique_layers=2)


def test_transformer_config_checks_the_decoder_plan_too():
    """M = 3 distinct layers cannot serve a 2-layer decoder: say so when the config is made."""
    with pytest.raises(ValueError, match="num_decoder_layers"):
        transformer_config(sharing="cycle", num_hidden_layers=4, num_unique_layers=3, num_decoder_layers=2)
    with pytest.raises(ValueError, match="num_decoder_layers"):
        transformer_config(num_decoder_layers=0)


def test_models_refuse_the_wrong_config_type():
    with pytest.raises(TypeError, match="AlbertConfig"):
        AlbertModel(transformer_config())
    with pytest.raises(TypeError, match="TransformerConfig"):
        DecoderLM(albert_config())


# ================================================ the Universal Transformer's timestep signal
@pytest.mark.parametrize("norm", ["post", "pre"])
def test_universal_timestep_signal_runs_and_changes_the_output(norm):
    on = build(AlbertModel, albert_config(sharing="universal", timestep_signal=True, norm_position=norm))
    off = AlbertModel(albert_config(sharing="universal", norm_position=norm)).double()
    shared = AlbertModel(albert_config(sharing="all-shared", norm_position=norm)).double()
    copy_weights(on, off)
    copy_weights(on, shared)
    outs = [host(m(ids(ID_BATCH), attention_mask=ids(MASK)).last_hidden_state) for m in (on, off, shared)]
    assert np.isfinite(outs[0]).all()
    assert np.abs(outs[0] - outs[1]).max() > 1e-2
    np.testing.assert_array_equal(outs[1], outs[2])     # without the signal, universal = all-shared
