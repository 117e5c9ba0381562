"""Cases of exercise 7: identity of the shared tensor, hand counts (V × E saved), the head's logits
against the reference solution's with the grader's parameters, the gradient of the tied table as
the sum of its two uses, and, in the hidden cases, a NumPy reimplementation of the head with
finite differences of it. That NumPy head is task 1's answer, so it sits with the hidden cases,
which the release leaves out: a visible case compares with the reference solution (``ref``)."""
import math

import numpy as np

import minishare
from minishare.grader.cases import case
from minishare.models import AlbertConfig, AlbertForPreTraining
from minishare.nn import Embedding
from minishare.optim import SGD


def config(**fields):
    return AlbertConfig(**{**dict(vocab_size=30, embedding_size=4, hidden_size=8, num_hidden_layers=2,
                                  num_attention_heads=2, intermediate_size=16, max_position_embeddings=16),
                           **fields})


def random_head(rng, V, E, H, batch):
    """Every parameter of a TiedHead (table V × E, hidden size H) and an input h of shape
    ``batch`` + (H,), drawn by the grader: the arrays ``head_numpy`` takes."""
    return {"h": rng.standard_normal((*batch, H)), "D": rng.standard_normal((E, H)), "d": rng.standard_normal(E),
            "g": rng.standard_normal(E), "W": rng.standard_normal((V, E)), "c": rng.standard_normal(V)}


def set_head(head, arrays):
    """Give the head's parameters the grader's values (``random_head``)."""
    for p, name in ((head.dense.weight, "D"), (head.dense.bias, "d"), (head.gain, "g"), (head.weight, "W"),
                    (head.bias, "c")):
        p.data = arrays[name]


@case("ex07_task1")
def test_head_uses_the_table_itself_and_counts(tying):
    table = Embedding(30, 4)
    head = tying.TiedHead(table, 8)
    h = minishare.tensor(np.random.default_rng(0).standard_normal((2, 3, 8)).astype(np.float32))
    return {"is the table": head.weight is table.weight, "count": minishare.count_parameters(head),
            "shape": list(head(h).shape)}


@test_head_uses_the_table_itself_and_counts.judge
def _(out, ref):
    assert out["is the table"] is True, "the head's weight is not the word-embedding Parameter"
    assert out["count"] == 30 * 4 + (8 * 4 + 4) + 4 + 30, out["count"]   # table, dense, gain, bias
    assert out["shape"] == [2, 3, 30], out["shape"]


@case("ex07_task1")
def test_head_starts_at_ones_and_zeros_and_scores(tying, given):
    """h -> dense -> gelu -> RMSNorm -> scores, in float64: a fresh head's gain is ones and its bias
    zeros; then, with the grader's values for every parameter, its logits."""
    head = tying.TiedHead(Embedding(9, 4).double(), 6).double()
    fresh = {"g": head.gain.numpy().copy(), "c": head.bias.numpy().copy()}
    set_head(head, given)
    return {**fresh, "logits": head(minishare.tensor(given["h"])).numpy()}


@test_head_starts_at_ones_and_zeros_and_scores.given
def _(rng):
    return random_head(rng, V=9, E=4, H=6, batch=(2, 3))


@test_head_starts_at_ones_and_zeros_and_scores.judge
def _(out, ref):
    np.testing.assert_array_equal(out["g"], np.ones(4), err_msg="the gain starts at ones")
    np.testing.assert_array_equal(out["c"], np.zeros(9), err_msg="the bias starts at zeros")
    np.testing.assert_allclose(out["logits"], ref["logits"], rtol=1e-9, atol=1e-10)


@case("ex07_task1")
def test_tied_table_gradient_is_the_sum_of_both_uses(tying):
    """The table is used twice: looked up at the input and scored against at the output. Untie it
    into two tables with the same values: their gradients add up to the tied one."""
    minishare.manual_seed(0)
    table = Embedding(7, 3).double()
    head = tying.TiedHead(table, 3).double()
    ids = np.array([[1, 2, 2]])
    v = np.random.default_rng(1).standard_normal((1, 3, 7))
    head(table(ids)).backward(v)
    tied = table.weight.grad.copy()

    copy = Embedding(7, 3).double()
    copy.weight.data = table.weight.data.copy()
    for p in head.parameters():
        p.grad = None
    table.weight.grad = None
    head(copy(ids)).backward(v)
    return {"tied": tied, "output use": table.weight.grad, "input use": copy.weight.grad}


@test_tied_table_gradient_is_the_sum_of_both_uses.judge
def _(out, ref):
    assert out["output use"] is not None and out["input use"] is not None, "a use got no gradient"
    assert np.abs(out["output use"]).sum() > 0, "no gradient reaches the table from the output"
    np.testing.assert_allclose(out["tied"], out["output use"] + out["input use"], rtol=1e-10)


@case("ex07_task2")
def test_tie_saves_v_times_e_and_moves_together(tying):
    minishare.manual_seed(1)
    model = AlbertForPreTraining(config(tie_word_embeddings=False))
    saved = tying.tie(model)
    return {"saved": saved,
            "identity": model.predictions.decoder.weight is model.albert.embeddings.word_embeddings.weight}


@test_tie_saves_v_times_e_and_moves_together.judge
def _(out, ref):
    assert out["saved"] == 30 * 4, out["saved"]
    assert out["identity"] is True, "the decoder's weight is not the word-embedding Parameter"


@case("ex07_task3")
def test_status_of_three_models(tying):
    minishare.manual_seed(2)
    return [tying.tying_status(AlbertForPreTraining(config())),
            tying.tying_status(AlbertForPreTraining(config(tie_word_embeddings=False)))]


@test_status_of_three_models.judge
def _(out, ref):
    assert out == ["tied", "untied"], out


### BEGIN HIDDEN TESTS
# The head in NumPy, for the hidden judges: task 1's answer, so the release must not ship it.
_erf = np.vectorize(math.erf)


def head_numpy(h, D, d, g, W, c, eps=1e-6):
    """The head in NumPy: gelu (exact, x Φ(x)) of h Dᵀ + d, RMSNorm over E with gain g, then
    scores against W (V, E) plus c."""
    x = h @ D.T + d
    x = x * 0.5 * (1 + _erf(x / math.sqrt(2)))
    x = x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * g
    return x @ W.T + c


@case("ex07_task1")
def test_head_values_with_every_parameter_random(tying, given):
    """Random dense, gain, bias and table (11 × 5), a batch of 2 × 4 × 7: the transform before the
    tied scores (dense, gelu, RMSNorm over E) in the right order, and every term."""
    head = tying.TiedHead(Embedding(11, 5).double(), 7).double()
    set_head(head, given)
    return head(minishare.tensor(given["h"])).numpy()


@test_head_values_with_every_parameter_random.given
def _(rng):
    return random_head(rng, V=11, E=5, H=7, batch=(2, 4))


@test_head_values_with_every_parameter_random.judge
def _(out, ref, given):
    np.testing.assert_allclose(out, head_numpy(**given), rtol=1e-9, atol=1e-10)


@case("ex07_task1")
def test_head_gradients_against_finite_differences(tying, given):
    """d(Σ v · logits) with respect to h, the gain and the shared table, against central
    differences of the NumPy head."""
    head = tying.TiedHead(Embedding(5, 3).double(), 4).double()
    set_head(head, given)
    h = minishare.tensor(given["h"], requires_grad=True)
    head(h).backward(given["v"])
    return {"dh": h.grad, "dg": head.gain.grad, "dW": head.weight.grad}


@test_head_gradients_against_finite_differences.given
def _(rng):
    return {**random_head(rng, V=5, E=3, H=4, batch=(1, 2)), "v": rng.standard_normal((1, 2, 5))}


@test_head_gradients_against_finite_differences.judge
def _(out, ref, given):
    arrays = {name: given[name] for name in ("h", "D", "d", "g", "W", "c")}

    def loss(**changed):
        return float((given["v"] * head_numpy(**{**arrays, **changed})).sum())

    for grad_name, name in (("dh", "h"), ("dg", "g"), ("dW", "W")):
        numeric = np.zeros_like(arrays[name])
        for i in np.ndindex(numeric.shape):
            plus, minus = arrays[name].copy(), arrays[name].copy()
            plus[i] += 1e-6
            minus[i] -= 1e-6
            numeric[i] = (loss(**{name: plus}) - loss(**{name: minus})) / 2e-6
        np.testing.assert_allclose(out[grad_name], numeric, rtol=1e-6, atol=1e-7, err_msg=grad_name)


@case("ex07_task2")
def test_tie_keeps_the_embedding_and_drops_the_decoder_copy(tying):
    """The decoder takes the word embedding's Parameter, so the embedding keeps its values (tying
    the other way round would replace the trained input table by the decoder's)."""
    minishare.manual_seed(11)
    model = AlbertForPreTraining(config(tie_word_embeddings=False))
    table = model.albert.embeddings.word_embeddings.weight
    before = table.numpy().copy()
    tying.tie(model)
    now = model.albert.embeddings.word_embeddings.weight
    return {"before": before, "after": now.numpy(), "same embedding Parameter": now is table,
            "decoder is it": model.predictions.decoder.weight is now}


@test_tie_keeps_the_embedding_and_drops_the_decoder_copy.judge
def _(out, ref):
    assert out["same embedding Parameter"] is True and out["decoder is it"] is True, out
    np.testing.assert_array_equal(out["after"], out["before"])


@case("ex07_task2")
def test_after_tie_a_training_step_keeps_one_table(tying):
    minishare.manual_seed(5)
    model = AlbertForPreTraining(config(tie_word_embeddings=False))
    tying.tie(model)
    table = model.albert.embeddings.word_embeddings.weight
    before = table.numpy().copy()
    model(np.array([[2, 5, 7, 1]]), labels=np.array([[-100, 5, -100, 1]])).loss.backward()
    optimizer = SGD(model.parameters(), lr=0.1)
    optimized = sum(p.size for p in optimizer.param_groups[0]["params"])
    optimizer.step()
    return {"optimized": optimized, "count": minishare.count_parameters(model),
            "still tied": model.predictions.decoder.weight is table,
            "before": before, "after": table.numpy(), "grad": table.grad}


@test_after_tie_a_training_step_keeps_one_table.judge
def _(out, ref):
    assert out["optimized"] == out["count"], (out["optimized"], out["count"])
    assert out["still tied"] is True
    np.testing.assert_allclose(out["after"], out["before"] - 0.1 * out["grad"], rtol=1e-5, atol=1e-7)


@case("ex07_task3")
def test_a_copy_is_detected_and_drifts(tying):
    minishare.manual_seed(6)
    model = AlbertForPreTraining(config(tie_word_embeddings=False))
    model.predictions.decoder.weight = minishare.nn.Parameter(
        model.albert.embeddings.word_embeddings.weight.data.copy())
    copied = tying.tying_status(model)
    model.predictions.decoder.weight.data = model.predictions.decoder.weight.data + 1.0
    return [copied, tying.tying_status(model)]


@test_a_copy_is_detected_and_drifts.judge
def _(out, ref):
    assert out == ["copied", "untied"], out
### END HIDDEN TESTS
