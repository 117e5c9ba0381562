"""Cases of exercise 4: the paper's numbers, hand counts, the reference solution's outputs with the
grader's weights, and, in the hidden cases, a NumPy reimplementation of the module and finite
differences of it. No judge trusts the submission's arithmetic, or the library's count of it.
Random sizes, weights and inputs are drawn by a case's ``given`` function, on the grader's side.
The NumPy module is task 2's answer, so it sits with the hidden cases, which the release leaves
out: a visible case compares with the reference solution (``ref``)."""
import numpy as np

import minishare
from minishare.grader.cases import case


def with_factors(emb, given):
    """Probe helper: the module (in float64) with the grader's table W, projection weight P and
    bias b, so that its outputs are the reference's whatever order its __init__ draws them in."""
    emb = emb.double()
    emb.word_embeddings.weight.data = given["W"]
    emb.projection.weight.data = given["P"]
    emb.projection.bias.data = given["b"]
    return emb


def factors(rng, V, E, H):
    """Given helper: W (V × E), P (H × E) and b (H) of a module with a projection."""
    return {"W": rng.standard_normal((V, E)), "P": rng.standard_normal((H, E)), "b": rng.standard_normal(H)}


@case("ex04_task1")
def test_counts_of_the_paper(embedding):
    """Sec. 3.1: V = 30,000 and H = 4096 (xxlarge): 123M for V×H, about 4.4M with E = 128."""
    return [embedding.embedding_parameters(30000, 4096, 4096), embedding.embedding_parameters(30000, 128, 4096)]


@test_counts_of_the_paper.judge
def _(out, ref):
    assert out[0] == 122_880_000, out[0]
    assert out[1] == 30000 * 128 + 128 * 4096 + 4096, out[1]


@case("ex04_task2")
def test_module_counts_and_shapes(embedding):
    """The module holds V·E + E·H + H numbers (the tied output adds none); with E = H there is no
    projection."""
    FactorizedEmbedding = embedding.FactorizedEmbedding
    emb = FactorizedEmbedding(50, 4, 16)
    h = minishare.tensor(np.zeros((1, 3, 16), dtype=np.float32))
    return {"count": minishare.count_parameters(emb),
            "shape": list(emb(np.array([[1, 2, 3]])).shape),
            "logits shape": list(emb.logits(h).shape),
            "count after logits": minishare.count_parameters(emb),
            "no projection when E = H": FactorizedEmbedding(50, 16, 16).projection is None}


@test_module_counts_and_shapes.judge
def _(out, ref):
    assert out["count"] == 50 * 4 + 4 * 16 + 16, out["count"]
    assert out["shape"] == [1, 3, 16] and out["logits shape"] == [1, 3, 50], (out["shape"], out["logits shape"])
    assert out["count after logits"] == out["count"], "logits created parameters"
    assert out["no projection when E = H"] is True


@case("ex04_task2")
def test_forward_is_lookup_then_projection(embedding, given):
    emb = with_factors(embedding.FactorizedEmbedding(10, 3, 5), given)
    return emb(np.array([[4, 4, 9]])).numpy()


@test_forward_is_lookup_then_projection.given
def _(rng):
    return factors(rng, V=10, E=3, H=5)


@test_forward_is_lookup_then_projection.judge
def _(out, ref):
    np.testing.assert_allclose(out, ref, rtol=1e-10, atol=1e-12)


@case("ex04_task2")
def test_logits_go_back_through_both_factors(embedding, given):
    """logits = (h P) Wᵀ: H -> E by the projection's weight transposed, then against the table."""
    emb = with_factors(embedding.FactorizedEmbedding(7, 2, 4), given)
    return emb.logits(minishare.tensor(given["h"])).numpy()


@test_logits_go_back_through_both_factors.given
def _(rng):
    return {**factors(rng, V=7, E=2, H=4), "h": rng.standard_normal((2, 3, 4))}


@test_logits_go_back_through_both_factors.judge
def _(out, ref):
    np.testing.assert_allclose(out, ref, rtol=1e-10, atol=1e-12)


@case("ex04_task3")
def test_break_even_for_albert_base_width(embedding):
    """V = 30,000, H = 768: E ≤ 748 saves parameters, E = 749 does not (worked by hand)."""
    return embedding.break_even_embedding_size(30000, 768)


@test_break_even_for_albert_base_width.judge
def _(out, ref):
    assert out == 748, out


@case("ex04_task3", timeout=5)
def test_break_even_beyond_the_precision_of_a_float(embedding):
    """V = 10^21, H = 10^20: E < (V H - H) / (V + H) = (10^21 - 1) / 11, so E is
    90909090909090909090. A float holds about 16 digits: the same division in floats is off by
    thousands."""
    return embedding.break_even_embedding_size(10**21, 10**20)


@test_break_even_beyond_the_precision_of_a_float.judge
def _(out, ref):
    assert out == 90909090909090909090, out


### BEGIN HIDDEN TESTS
# The module in NumPy, for the hidden judges: task 2's answer, so the release must not ship it.
def forward_numpy(W, P, b, ids):
    """The factorized embedding in NumPy: lookup in W (V, E), then x Pᵀ + b (P is H × E)."""
    return W[ids] @ P.T + b


def logits_numpy(W, P, h):
    """The output tied to both factors: (h P) Wᵀ."""
    return (h @ P) @ W.T


def saves(V, E, H):
    """Whether E saves parameters over BERT's V × H table, counted term by term."""
    return V * E + E * H + H < V * H


def huge(rng):
    """Given helper: a random int between 10^20 and 10^21, beyond the 16 digits of a float."""
    return int(rng.integers(10**17, 10**18)) * 1000 + int(rng.integers(1000))


@case("ex04_task1")
def test_counts_for_many_shapes_by_hand(embedding, given):
    return [embedding.embedding_parameters(V, E, H) for V, E, H in given]


@test_counts_for_many_shapes_by_hand.given
def _(rng):
    drawn = [[int(n) for n in rng.integers(1, 5000, size=3)] for _ in range(4)]
    return [[7, 2, 3], [100, 8, 8], [30, 5, 40], [1, 1, 1], [30000, 768, 768], [2, 9, 3]] + drawn


@test_counts_for_many_shapes_by_hand.judge
def _(out, ref, given):
    for (V, E, H), count in zip(given, out):
        table, projection = V * E, (E * H + H if E != H else 0)
        assert count == table + projection, (V, E, H, count)


@case("ex04_task2")
def test_gradients_reach_both_factors_from_both_uses(embedding, given):
    """The table and the projection are each used twice (embedding and output): their gradients,
    compared with finite differences of the NumPy model, hold both uses."""
    minishare.manual_seed(given["seed"])
    emb = embedding.FactorizedEmbedding(5, 2, 3).double()
    emb.logits(emb(given["ids"])).backward(given["v"])
    return {"W": emb.word_embeddings.weight.numpy(), "P": emb.projection.weight.numpy(),
            "b": emb.projection.bias.numpy(), "dW": emb.word_embeddings.weight.grad,
            "dP": emb.projection.weight.grad, "db": emb.projection.bias.grad}


@test_gradients_reach_both_factors_from_both_uses.given
def _(rng):
    """A token repeated in a row, so the table's gradient adds up within a batch too."""
    ids = rng.integers(5, size=(2, 3))
    ids[0, 1] = ids[0, 0]
    return {"seed": int(rng.integers(2**31)), "ids": ids, "v": rng.standard_normal((2, 3, 5))}


@test_gradients_reach_both_factors_from_both_uses.judge
def _(out, ref, given):
    W, P, b, ids, v = out["W"], out["P"], out["b"], given["ids"], given["v"]

    def loss(W, P, b):
        return float((v * logits_numpy(W, P, forward_numpy(W, P, b, ids))).sum())

    arrays = {"dW": W, "dP": P, "db": b}
    for name, array in arrays.items():
        numeric = np.zeros_like(array)
        for i in np.ndindex(array.shape):
            plus, minus = [{k: a.copy() for k, a in arrays.items()} for _ in range(2)]
            plus[name][i] += 1e-6
            minus[name][i] -= 1e-6
            numeric[i] = (loss(plus["dW"], plus["dP"], plus["db"]) - loss(minus["dW"], minus["dP"], minus["db"])) / 2e-6
        assert out[name] is not None and np.shape(out[name]) == array.shape, f"{name}: no gradient"
        np.testing.assert_allclose(out[name], numeric, rtol=1e-6, atol=1e-7, err_msg=name)


@case("ex04_task2")
def test_without_projection_the_output_is_the_table_alone(embedding, given):
    """E = H: no projection; forward is the lookup and logits = h Wᵀ, still tied."""
    minishare.manual_seed(given["seed"])
    emb = embedding.FactorizedEmbedding(6, 3, 3).double()
    logits = emb.logits(minishare.tensor(given["h"]))
    logits.sum().backward()
    return {"W": emb.word_embeddings.weight.numpy(), "logits": logits.numpy(),
            "lookup": emb(np.array([[5, 0]])).numpy(), "count": minishare.count_parameters(emb),
            "dW": emb.word_embeddings.weight.grad}


@test_without_projection_the_output_is_the_table_alone.given
def _(rng):
    return {"seed": int(rng.integers(2**31)), "h": rng.standard_normal((1, 2, 3))}


@test_without_projection_the_output_is_the_table_alone.judge
def _(out, ref, given):
    W, h = out["W"], given["h"]
    assert out["count"] == 6 * 3, out["count"]
    np.testing.assert_allclose(out["lookup"], W[[[5, 0]]], rtol=1e-12)
    np.testing.assert_allclose(out["logits"], h @ W.T, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out["dW"], np.broadcast_to(h.reshape(-1, 3).sum(0), W.shape), rtol=1e-10)


@case("ex04_task3")
def test_break_even_is_tight_by_direct_count(embedding):
    """Every V, H up to 40 (some divide exactly: V = H = 7 needs E = 2, as E = 3 only ties), and
    the widths of the paper."""
    pairs = [(V, H) for V in range(2, 41) for H in range(2, 41)] + [(30000, 4096), (30000, 1024), (1000, 128)]
    return [[V, H, embedding.break_even_embedding_size(V, H)] for V, H in pairs]


@test_break_even_is_tight_by_direct_count.judge
def _(out, ref):
    for V, H, E in out:
        assert saves(V, E, H) and not saves(V, E + 1, H), (V, H, E)


@case("ex04_task3", timeout=5)
def test_break_even_for_huge_sizes_without_a_loop(embedding, given):
    """V = 10^15 and H = 10^12: an answer near 0.999 H, found by arithmetic, not by trying E; and
    sizes near 10^20, where only integer arithmetic is exact."""
    return [embedding.break_even_embedding_size(V, H) for V, H in given]


@test_break_even_for_huge_sizes_without_a_loop.given
def _(rng):
    return [[10**15, 10**12], [10**12 + 1, 10**12 + 1]] + [[huge(rng), huge(rng)] for _ in range(3)]


@test_break_even_for_huge_sizes_without_a_loop.judge
def _(out, ref, given):
    for (V, H), E in zip(given, out):
        assert isinstance(E, int) and saves(V, E, H) and not saves(V, E + 1, H), (V, H, E)
### END HIDDEN TESTS
