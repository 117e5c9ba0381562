"""Cases of exercise 3: hand-worked cases, the reference solution's outputs on random inputs,
and, in the hidden cases, an attention written here with NumPy loops over heads and queries (each
query head given its key/value head explicitly), invariances (no future, no padding leaks in) and
central differences of that NumPy attention.

Each probe calls ``attention`` (the student's module) and returns arrays; its judge, run by the
grader, checks them. Random inputs, the seed of a module's weights and the mask task 3 needs
(task 2's answer) are chosen by each case's ``given`` function, on the grader's side. The loop
attention is tasks 1 and 3's answer, so it sits with the hidden cases, which the release leaves
out: a visible case compares with the reference solution (``ref``)."""
import math

import numpy as np

import minishare
from minishare.grader.cases import case, raises, same


def t(a, grad=False):
    return minishare.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def decoder_mask(real):
    """Given helper: task 2's mask, built on the grader's side so that task 3's cases do not
    depend on task 2: (B, T) 1/0 -> (B, 1, T, T), key s visible to query t when s <= t and s is
    real."""
    T = real.shape[1]
    return np.tril(np.ones((T, T), bool))[None, None] & real.astype(bool)[:, None, None, :]


def seed(rng):
    """Given helper: a seed for ``minishare.manual_seed``, so a module's weights are drawn too."""
    return int(rng.integers(2 ** 31))


def weights_of(gqa):
    """Probe helper: the module's parameters as arrays."""
    return {f"{name}.{part}": getattr(getattr(gqa, name), part).numpy()
            for name in ("query", "key", "value", "dense") for part in ("weight", "bias")}


# --------------------------------------------------------------------------- task 1
@case("ex03_task1")
def test_zero_queries_average_the_values(attention):
    """q = 0: every score is 0, so the output is the mean of the allowed values."""
    v = np.arange(6.0).reshape(1, 3, 2)
    out, probs = attention.scaled_dot_product_attention(t(np.zeros((1, 1, 4))), t(np.ones((1, 3, 4))), t(v),
                                                        np.array([[True, True, False]]))
    return [out.numpy(), probs.numpy()]


@test_zero_queries_average_the_values.judge
def _(out, ref):
    same(out, [np.array([[[1.0, 2.0]]]), np.array([[[0.5, 0.5, 0.0]]])], rtol=1e-12)


@case("ex03_task1")
def test_grouped_attention_with_a_mask(attention, given):
    """4 query heads, 2 key/value heads (heads 0, 1 read key/value head 0; heads 2, 3 head 1);
    d = 4, dv = 3."""
    mask = given["mask"]
    out, probs = attention.scaled_dot_product_attention(t(given["q"]), t(given["k"]), t(given["v"]), mask)
    return {"out": out.numpy(), "masked probabilities": probs.numpy()[np.broadcast_to(~mask, probs.shape)]}


@test_grouped_attention_with_a_mask.given
def _(rng):
    mask = rng.random((2, 1, 3, 5)) < 0.6
    mask[..., 0] = True                  # every query may attend somewhere
    return {"q": rng.standard_normal((2, 4, 3, 4)), "k": rng.standard_normal((2, 2, 5, 4)),
            "v": rng.standard_normal((2, 2, 5, 3)), "mask": mask}


@test_grouped_attention_with_a_mask.judge
def _(out, ref):
    same(out["out"], ref["out"], rtol=1e-10, where="the output")
    assert (out["masked probabilities"] == 0).all(), "a masked key has a probability other than 0"


# --------------------------------------------------------------------------- task 2
@case("ex03_task2")
def test_mask_hand_worked(attention):
    mask = attention.causal_and_padding_mask(np.array([[1, 1, 0]]))
    return {"dtype": str(mask.dtype), "mask": np.asarray(mask)}


@test_mask_hand_worked.judge
def _(out, ref):
    assert out["dtype"] == "bool", f"the mask has dtype {out['dtype']}, expected bool"
    same(out["mask"], np.array([[[[1, 0, 0], [1, 1, 0], [1, 1, 0]]]], dtype=bool))


# --------------------------------------------------------------------------- task 3
@case("ex03_task3")
def test_grouped_query_attention_with_a_causal_padded_mask(attention, given):
    """H = 8, 4 query heads of size 2, 2 key/value heads; a causal mask over a padded batch."""
    minishare.manual_seed(given["seed"])      # the module's parameters (given) are the reference's
    gqa = attention.GroupedQueryAttention(8, 4, 2).double()
    return gqa(t(given["x"]), given["mask"]).numpy()


@test_grouped_query_attention_with_a_causal_padded_mask.given
def _(rng):
    return {"seed": seed(rng), "x": rng.standard_normal((2, 4, 8)),
            "mask": decoder_mask(np.array([[1, 1, 1, 1], [1, 1, 0, 0]]))}


@test_grouped_query_attention_with_a_causal_padded_mask.judge
def _(out, ref):
    same(out[0], ref[0], rtol=1e-9, where="example 0")
    same(out[1, :2], ref[1, :2], rtol=1e-9, where="example 1")   # padded queries: any value


### BEGIN HIDDEN TESTS
# The NumPy attention, for the hidden judges: tasks 1 and 3's answer, so the release must not ship it.
def reference_attention(q, k, v, mask):
    """One query at a time, with plain exp and a sum over allowed keys. q (..., h, Tq, d),
    k (..., g, Tk, d), v (..., g, Tk, dv): query head j reads key/value head j // (h / g)."""
    h, g = q.shape[-3], k.shape[-3]
    out = np.zeros(q.shape[:-1] + v.shape[-1:])
    allowed_all = np.broadcast_to(np.ones((), bool) if mask is None else mask, q.shape[:-1] + k.shape[-2:-1])
    for index in np.ndindex(*q.shape[:-1]):
        *lead, j, i = index
        kv = tuple(lead) + (j // (h // g),)
        allowed = allowed_all[index]
        if not allowed.any():
            continue
        scores = np.array([q[index] @ k[kv + (s,)] / math.sqrt(q.shape[-1]) for s in range(k.shape[-2])])
        weights = np.where(allowed, np.exp(scores - scores[allowed].max()), 0.0)
        out[index] = (weights / weights.sum()) @ v[kv]
    return out


def reference_gqa(w, x, context, mask, h, g):
    """Judge helper: grouped-query attention in NumPy with the module's parameters ``w``."""
    def proj(name, a):
        return a @ w[f"{name}.weight"].T + w[f"{name}.bias"]

    B, Tq, H = x.shape
    d = H // h

    def heads(a, count):
        return a.reshape(B, a.shape[1], count, d).transpose(0, 2, 1, 3)

    out = reference_attention(heads(proj("query", x), h), heads(proj("key", context), g),
                              heads(proj("value", context), g), mask)
    return proj("dense", out.transpose(0, 2, 1, 3).reshape(B, Tq, H))


def numeric_gradient(f, a, eps=1e-6):
    g = np.zeros_like(a)
    for i in np.ndindex(*a.shape):
        up, down = a.copy(), a.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (f(up) - f(down)) / (2 * eps)
    return g


@case("ex03_task1")
def test_a_query_that_may_attend_nowhere_gives_zeros_not_nan(attention):
    out, probs = attention.scaled_dot_product_attention(t(np.ones((1, 2, 3))), t(np.ones((1, 2, 3))),
                                                        t(np.ones((1, 2, 3))), np.array([[False, False], [True, False]]))
    return [out.numpy(), probs.numpy()]


@test_a_query_that_may_attend_nowhere_gives_zeros_not_nan.judge
def _(out, ref):
    same(out, [np.array([[[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]]), np.array([[[0.0, 0.0], [1.0, 0.0]]])])


@case("ex03_task1")
def test_multi_query_attention_gradients(attention, given):
    """g = 1 (multi-query): two query heads share one key/value head; d = 3, dv = 2."""
    q, k, v = (t(a, grad=True) for a in given["q, k, v"])
    attention.scaled_dot_product_attention(q, k, v, given["mask"])[0].backward(given["cotangent"])
    return [q.grad, k.grad, v.grad]


@test_multi_query_attention_gradients.given
def _(rng):
    return {"q, k, v": [rng.standard_normal(shape) for shape in ((2, 2, 3), (1, 4, 3), (1, 4, 2))],
            "mask": np.array([[True, True, False, True], [True, False, False, False]]),
            "cotangent": rng.standard_normal((2, 2, 2))}


@test_multi_query_attention_gradients.judge
def _(out, ref, given):
    arrays, mask, cot = given["q, k, v"], given["mask"], given["cotangent"]
    for n, name in enumerate("qkv"):
        def phi(moved, n=n):
            args = list(arrays)
            args[n] = moved
            return float((cot * reference_attention(*args, mask)).sum())
        same(out[n], numeric_gradient(phi, arrays[n]), rtol=1e-5, atol=1e-8, where=f"the gradient of {name}")


@case("ex03_task1")
def test_one_key_value_head_per_query_head_is_multi_head_attention(attention, given):
    """g = h = 3, over a leading batch axis of 2, no mask."""
    out, _ = attention.scaled_dot_product_attention(*(t(a) for a in given))
    return out.numpy()


@test_one_key_value_head_per_query_head_is_multi_head_attention.given
def _(rng):
    return [rng.standard_normal(shape) for shape in ((2, 3, 2, 4), (2, 3, 5, 4), (2, 3, 5, 2))]


@test_one_key_value_head_per_query_head_is_multi_head_attention.judge
def _(out, ref, given):
    same(out, reference_attention(*given, None), rtol=1e-10)


@case("ex03_task1")
def test_attention_refuses_groups_that_do_not_divide_the_heads(attention):
    return raises(ValueError, attention.scaled_dot_product_attention, t(np.ones((3, 2, 4))),
                  t(np.ones((2, 2, 4))), t(np.ones((2, 2, 4))))


@case("ex03_task2")
def test_mask_of_a_batch_differs_per_example(attention):
    return np.asarray(attention.causal_and_padding_mask(np.array([[1, 1], [1, 0]])))


@test_mask_of_a_batch_differs_per_example.judge
def _(out, ref):
    same(out, np.array([[[[1, 0], [1, 1]]], [[[1, 0], [1, 0]]]], dtype=bool))


@case("ex03_task2")
def test_mask_of_a_longer_padded_sequence(attention):
    return np.asarray(attention.causal_and_padding_mask(np.array([[1, 1, 1, 0, 0], [1, 0, 0, 0, 0]])))


@test_mask_of_a_longer_padded_sequence.judge
def _(out, ref):
    real = np.array([[1, 1, 1, 0, 0], [1, 0, 0, 0, 0]], dtype=bool)
    expected = np.array([[[[s <= q and real[b, s] for s in range(5)] for q in range(5)]] for b in range(2)])
    same(out, expected)


@case("ex03_task3")
def test_no_future_and_no_padding_leaks_in(attention, given):
    """Changing a future token, or a padding token, leaves the earlier real positions' outputs;
    multi-query (one key/value head for three query heads)."""
    minishare.manual_seed(given["seed"])
    gqa = attention.GroupedQueryAttention(6, 3, 1).double()
    x, mask = given["x"], given["mask"]
    x2 = x.copy()
    x2[0, 3:] += 10.0
    return {"before": gqa(t(x), mask).numpy(), "after": gqa(t(x2), mask).numpy(), "weights": weights_of(gqa)}


@test_no_future_and_no_padding_leaks_in.given
def _(rng):
    return {"seed": seed(rng), "x": rng.standard_normal((1, 5, 6)), "mask": decoder_mask(np.array([[1, 1, 1, 1, 0]]))}


@test_no_future_and_no_padding_leaks_in.judge
def _(out, ref, given):
    same(out["after"][0, :3], out["before"][0, :3], rtol=1e-12, where="positions 0-2 after changing 3-4")
    assert not np.allclose(out["after"][0, 3], out["before"][0, 3]), "position 3 ignores its own token"
    x = given["x"]
    same(out["before"][0, :4], reference_gqa(out["weights"], x, x, given["mask"], h=3, g=1)[0, :4], rtol=1e-9,
         where="the output")


@case("ex03_task3")
def test_cross_attention_gradients_and_parameter_count(attention, given):
    """Queries from x (2 positions), keys and values from a context of 3; H = 4, 2 query heads,
    1 key/value head: 4·4+4 + 2·(4·2+2) + 4·4+4 = 60 parameters."""
    minishare.manual_seed(given["seed"])
    gqa = attention.GroupedQueryAttention(4, 2, 1).double()
    x, context = t(given["x"], True), t(given["context"], True)
    gqa(x, context=context).backward(given["cotangent"])
    return {"count": minishare.count_parameters(gqa), "x": x.grad, "context": context.grad, "weights": weights_of(gqa)}


@test_cross_attention_gradients_and_parameter_count.given
def _(rng):
    return {"seed": seed(rng), "x": rng.standard_normal((1, 2, 4)), "context": rng.standard_normal((1, 3, 4)),
            "cotangent": rng.standard_normal((1, 2, 4))}


@test_cross_attention_gradients_and_parameter_count.judge
def _(out, ref, given):
    assert out["count"] == 60, f"{out['count']} parameters, expected 60"
    x, context, cot = given["x"], given["context"], given["cotangent"]
    w = out["weights"]
    same(out["x"], numeric_gradient(lambda a: float((cot * reference_gqa(w, a, context, None, 2, 1)).sum()), x),
         rtol=1e-5, atol=1e-8, where="the gradient of x")
    same(out["context"], numeric_gradient(lambda a: float((cot * reference_gqa(w, x, a, None, 2, 1)).sum()), context),
         rtol=1e-5, atol=1e-8, where="the gradient of the context")
### END HIDDEN TESTS
