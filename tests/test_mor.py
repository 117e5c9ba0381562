"""Mixture-of-Recursions (``minishare.nn.mor``; Bae et al., 2025): the token gather and
scatter-add against finite differences, the top-k and the capacities by hand, a routing worked
out by hand, the whole router through finite differences, the model's three depth rules, and
the compute per token against hand computation.

The top-k selection is piecewise constant: where two scores sit within the finite-difference
step of each other, nudging an input swaps them and the numerical derivative jumps. The
gradchecks therefore first measure, from the scores the router reports, how far the k-th score
of every step lies from the next one, and assert that margin is far larger than the step.
"""
import math

import numpy as np
import pytest

import minishare
from minishare import backend, functional as F
from minishare.analysis import mor as costs
from minishare.errors import InvalidValue
from minishare.gradcheck import gradcheck
from minishare.models import RecursionConfig, RecursiveForTokenClassification
from minishare.nn.mor import (MixtureOfRecursions, auxiliary_loss, capacity_tokens, check_capacities,
                              top_k_positions)
from conftest import const, host, leaf, randn


def logit(p):
    return math.log(p / (1 - p))


# ==================================================================== the two token ops
def test_gather_tokens_picks_each_sequence_its_own_positions():
    x = np.arange(2 * 4 * 3, dtype=np.float64).reshape(2, 4, 3)
    index = np.array([[3, 0], [1, 2]])
    y = host(F.gather_tokens(leaf(x), index))
    np.testing.assert_array_equal(y, np.stack([x[0, [3, 0]], x[1, [1, 2]]]))


def test_gather_tokens_backward_is_a_scatter_add():
    index = np.array([[0, 3, 1], [4, 4, 2]])              # a position picked twice: the gradients add
    assert gradcheck(lambda x: F.gather_tokens(x, index), leaf(randn(2, 5, 3)))


def test_scatter_add_tokens_forward_and_backward():
    x, s = randn(2, 5, 3), randn(2, 2, 3, seed=1)
    index = np.array([[1, 4], [0, 1]])
    y = host(F.scatter_add_tokens(leaf(x), index, leaf(s)))
    expected = x.copy()
    expected[0, [1, 4]] += s[0]
    expected[1, [0, 1]] += s[1]
    np.testing.assert_allclose(y, expected)
    assert gradcheck(lambda x, s: F.scatter_add_tokens(x, index, s), leaf(x), leaf(s))


@pytest.mark.parametrize("index", [np.array([0, 1]), np.array([[0.0, 1.0], [1.0, 0.0]]),
                                   np.array([[0, 5], [1, 2]]), np.array([[0, -1], [1, 2]]), np.array([[0, 1]])])
def test_a_token_index_out_of_shape_or_range_is_refused(index):
    with pytest.raises(InvalidValue):
        F.gather_tokens(leaf(randn(2, 5, 3)), index)


def test_scatter_add_tokens_refuses_values_of_the_wrong_shape():
    with pytest.raises(InvalidValue, match="shape"):
        F.scatter_add_tokens(leaf(randn(2, 5, 3)), np.array([[0, 1], [2, 3]]), leaf(randn(2, 3, 3)))


# ==================================================================== top-k and capacities
def test_top_k_positions_by_hand():
    scores = np.array([[0.2, 0.9, 0.5, 0.9, 0.1],
                       [0.7, 0.1, 0.3, 0.2, 0.8]])
    # row 0: the two 0.9 tie, then 0.5; ties go to the earlier position; returned ascending
    np.testing.assert_array_equal(host(top_k_positions(scores, 3)), [[1, 2, 3], [0, 2, 4]])
    np.testing.assert_array_equal(host(top_k_positions(scores, 1)), [[1], [4]])


def test_capacity_tokens_by_hand():
    assert capacity_tokens((1, 0.75, 0.5, 0.25), 8) == [8, 6, 4, 2]
    assert capacity_tokens((1, 0.75, 0.5, 0.25), 4) == [4, 3, 2, 1]
    assert capacity_tokens((1, 0.6, 0.1), 7) == [7, 4, 1]      # ⌊4.2⌋ = 4, ⌊0.7⌋ = 0 -> at least one


@pytest.mark.parametrize("capacities", [(), (1, 0.5, 0.75), (0, 0), (1.5,), (1, float("nan")), "1", (True,)])
def test_capacities_that_cannot_be_routed_are_refused(capacities):
    with pytest.raises(InvalidValue):
        check_capacities(capacities)


# ==================================================================== a routing worked out by hand
def mor_module(capacities, weights, biases, H=1, alpha=1.0):
    mor = MixtureOfRecursions(H, capacities, alpha).double()
    for router, w, b in zip(mor.routers, weights, biases):
        router.weight.data = backend.asarray(np.full((1, H), float(w)))
        router.bias.data = backend.asarray(np.array([float(b)]))
    return mor


def test_hand_worked_selection_depths_and_weights():
    # H = 1, every router g = σ(h), a block that returns 0: the states never move, so every step
    # sees the same scores p. Capacities 1, 1/2, 1/4 of T = 4 tokens: 4, 2 and 1 tokens.
    p = [0.9, 0.2, 0.6, 0.4]
    x = np.array([[[logit(q)] for q in p]])                                     # (1, 4, 1)
    seen = []

    def block(r, s):
        seen.append(host(s)[0, :, 0])
        return s * 0.0
    mor = mor_module((1, 0.5, 0.25), [1, 1, 1], [0, 0, 0])
    h, routing = mor(leaf(x), block)
    #   step 0: all four, in order            step 1: the top 2 of the four: 0.9 (t=0), 0.6 (t=2)
    #   step 2: the top 1 of {0, 2}: t=0      depths: t=0 three passes, t=2 two, t=1 and t=3 one
    assert [host(s).tolist() for s in routing.selected] == [[[0, 1, 2, 3]], [[0, 2]], [[0]]]
    np.testing.assert_array_equal(host(routing.depth), [[3, 1, 2, 1]])
    np.testing.assert_allclose(host(routing.weights[1]), [[0.9, 0.6]], atol=1e-12)
    np.testing.assert_allclose(host(routing.weights[2]), [[0.9]], atol=1e-12)
    np.testing.assert_allclose(host(routing.scores[2]), [[0.9, 0.6]], atol=1e-12)   # the candidates only
    # the block saw exactly the selected tokens' states, in ascending position order
    np.testing.assert_allclose(seen[1], [logit(0.9), logit(0.6)])
    np.testing.assert_allclose(host(h), x)


def test_hand_worked_updates_are_weighted_by_the_router_score():
    # a block that returns 1 for every selected token: H^{r+1} = H^r + g^r at the selected tokens
    x = np.array([[[0.5], [-1.0], [2.0], [0.0]]])
    mor = mor_module((1, 0.5), [0, 1], [0, 0])           # step 0: g = σ(0) = 1/2 for all; step 1: σ(h)
    h, routing = mor(leaf(x), lambda r, s: s * 0.0 + 1.0)
    after0 = x[0, :, 0] + 0.5
    g1 = 1 / (1 + np.exp(-after0))
    top = np.sort(np.argsort(-g1)[:2])                    # tokens 0 and 2
    expected = after0.copy()
    expected[top] += g1[top]
    np.testing.assert_array_equal(host(routing.selected[1]), [top])
    np.testing.assert_allclose(host(h)[0, :, 0], expected, atol=1e-12)


def test_alpha_scales_the_score_and_the_update():
    # α = 0.1 and a block that returns 1: H^1 = H^0 + α σ(0) = H^0 + 0.05 for every token of step 0
    x = np.array([[[0.5], [-1.0], [2.0], [0.0]]])
    mor = mor_module((1,), [0], [0], alpha=0.1)
    h, routing = mor(leaf(x), lambda r, s: s * 0.0 + 1.0)
    np.testing.assert_allclose(host(routing.scores[0]), [[0.05] * 4], atol=1e-12)
    np.testing.assert_allclose(host(h)[0, :, 0], x[0, :, 0] + 0.05, atol=1e-12)


def test_the_auxiliary_loss_is_the_binary_cross_entropy_of_the_choice():
    # one step over T = 4 with router logits z = h (weight 1, bias 0), capacity 1/2: tokens 0 and 2
    # have the top scores, so the targets are 1, 0, 1, 0; by hand: mean of -log σ(z) or -log(1 − σ(z))
    z = np.array([1.5, -0.5, 0.7, 0.2])
    mor = mor_module((0.5,), [1], [0])
    _, routing = mor(leaf(z.reshape(1, 4, 1)), lambda r, s: s * 0.0)
    np.testing.assert_array_equal(host(routing.chosen[0]), [[1, 0, 1, 0]])
    sigma = 1 / (1 + np.exp(-z))
    by_hand = -np.mean(np.log(np.where([1, 0, 1, 0], sigma, 1 - sigma)))
    assert float(host(auxiliary_loss(routing).data)) == pytest.approx(by_hand, rel=1e-12)


def test_the_auxiliary_loss_passes_finite_differences():
    H, T, capacities = 3, 6, (1, 0.5)
    rng = np.random.default_rng(5)
    mor = MixtureOfRecursions(H, capacities, alpha=0.5).double()
    for router in mor.routers:
        router.weight.data = backend.asarray(rng.standard_normal((1, H)))
    x, W = leaf(rng.standard_normal((2, T, H))), leaf(0.5 * rng.standard_normal((H, H)))
    _, routing = mor(x, lambda r, s: F.tanh(s @ W))
    assert score_margin(routing, capacities, T) > 1e-3

    def run(x, W, *router_weights):
        return auxiliary_loss(mor(x, lambda r, s: F.tanh(s @ W))[1])
    assert gradcheck(run, x, W, *[r.weight for r in mor.routers])


def test_the_model_adds_the_weighted_auxiliary_loss():
    batch = forest_batch()
    plain = RecursiveForTokenClassification(tiny("expert-choice", (1, 0.5, 0.25)))
    weighted = RecursiveForTokenClassification(tiny("expert-choice", (1, 0.5, 0.25), router_aux_loss_weight=0.3))
    weighted.load_state_dict(plain.state_dict())
    a, b = plain(batch["input_ids"], labels=batch["labels"]), weighted(batch["input_ids"], labels=batch["labels"])
    extra = float(host(auxiliary_loss(b.routing).data))
    assert float(host(b.loss.data)) == pytest.approx(float(host(a.loss.data)) + 0.3 * extra, rel=1e-5)


def score_margin(routing, capacities, T):
    """The smallest gap between the k-th and the (k+1)-th candidate score of any step."""
    gaps = []
    for g, k in zip(routing.scores, capacity_tokens(capacities, T)):
        s = np.sort(host(g), axis=1)[:, ::-1]
        if s.shape[1] > k:
            gaps.append((s[:, k - 1] - s[:, k]).min())
    return min(gaps)


def test_the_router_and_the_block_pass_finite_differences():
    H, T, capacities = 3, 6, (1, 0.5, 0.34)
    rng = np.random.default_rng(3)
    mor = MixtureOfRecursions(H, capacities).double()
    for router in mor.routers:
        router.weight.data = backend.asarray(rng.standard_normal((1, H)))
    x, W = leaf(rng.standard_normal((2, T, H))), leaf(0.5 * rng.standard_normal((H, H)))

    def run(x, W, *router_weights):
        return mor(x, lambda r, s: F.tanh(s @ W))[0]
    _, routing = mor(x, lambda r, s: F.tanh(s @ W))
    assert score_margin(routing, capacities, T) > 1e-3            # far from any swap at ε = 1e-6
    weights = [r.weight for r in mor.routers]
    assert gradcheck(run, x, W, *weights)


# ==================================================================== the model, three depth rules
def tiny(routing, capacities=None, **kw):
    return RecursionConfig(vocab_size=12, num_labels=12, hidden_size=8, num_attention_heads=2, intermediate_size=16,
                           num_recursions=3, routing=routing, capacities=capacities, **kw)


def forest_batch(T_chains=2, depth=3, B=4):
    from minishare.data import PointerForest
    return PointerForest(n_symbols=12, n_chains=T_chains).batch(np.random.default_rng(0), B, depth)


@pytest.mark.parametrize("routing, capacities", [("none", None), ("act", None), ("expert-choice", (1, 0.5, 0.25))])
def test_each_depth_rule_trains_and_reports_its_passes(routing, capacities):
    minishare.manual_seed(0)
    model = RecursiveForTokenClassification(tiny(routing, capacities))
    batch = forest_batch()                                       # T = 2 chains · 4 = 8 tokens
    out = model(batch["input_ids"], labels=batch["labels"])
    out.loss.backward()
    passes = host(out.passes)
    assert passes.shape == (4, 8) and passes.min() >= 1 and passes.max() <= 3
    if routing == "none":
        assert (passes == 3).all()
    if routing == "expert-choice":
        assert costs.tokens_per_step(passes, 3) == [8, 4, 2]     # k_r = ⌊c_r T⌋, whatever the input
        assert all(np.abs(host(r.weight.grad)).sum() > 0 for r in model.mor.routers)   # g carries a gradient
    if routing == "act":
        np.testing.assert_array_equal(passes, host(out.ponder.n_updates))


@pytest.mark.parametrize("fields", [dict(routing="expert-choice"), dict(routing="expert-choice", capacities=(1, 0.5)),
                                    dict(routing="act", capacities=(1, 1, 1)), dict(routing="deep"),
                                    dict(routing="none", act_epsilon=1.5),
                                    dict(routing="expert-choice", capacities=(1, 0.5, 0.25), router_alpha=0),
                                    dict(routing="expert-choice", capacities=(1, 0.5, 0.25), router_alpha=1.5),
                                    dict(routing="expert-choice", capacities=(1, 0.5, 0.25), router_aux_loss_weight=-1)])
def test_a_configuration_that_cannot_route_is_refused(fields):
    with pytest.raises(InvalidValue):
        tiny(**{"capacities": None, **fields})


# ==================================================================== compute per token, by hand
def test_macs_per_token_by_hand():
    # H = 4, I = 8, T = 8, one prelude layer, 3 recursions, 5 labels
    kw = dict(vocab_size=5, num_labels=5, hidden_size=4, num_attention_heads=2, intermediate_size=8, num_recursions=3)
    prelude = 4 * 16 + 2 * 8 * 4 + 2 * 4 * 8                               # 192: attends to all 8
    # expert-choice with 8, 4, 2 tokens, each attending to the tokens of its own step
    ec = costs.macs_per_token(RecursionConfig(**kw, routing="expert-choice", capacities=(1, 0.5, 0.25)), 8)
    assert ec["prelude"] == prelude
    assert ec["projections and FFN"] == (8 + 4 + 2) * (64 + 64) / 8          # 224
    assert ec["attention scores"] == (8 * 2 * 8 * 4 + 4 * 2 * 4 * 4 + 2 * 2 * 2 * 4) / 8   # 84
    assert ec["router"] == (8 + 8 + 4) * 4 / 8                             # candidates 8, 8, 4: 10
    assert ec["total"] == 192 + 224 + 84 + 10 + 20
    fixed = costs.macs_per_token(RecursionConfig(**kw, routing="none"), 8)
    assert fixed["total"] == 192 + 3 * 128 + 3 * 2 * 8 * 4 + 0 + 20          # 788
    # ACT: 8, 5, 2 tokens running, each attending to all 8; the halting unit on the running ones
    act = costs.macs_per_token(RecursionConfig(**kw, routing="act"), 8, steps=[8, 5, 2])
    assert act["total"] == 192 + 15 * 128 / 8 + 15 * 2 * 8 * 4 / 8 + 15 * 4 / 8 + 20   # 579.5
    assert costs.mean_passes([8, 4, 2], 8) == 1.75
    with pytest.raises(InvalidValue):
        costs.macs_per_token(RecursionConfig(**kw, routing="act"), 8)        # ACT has no plan


def test_tokens_per_step_reads_the_passes():
    passes = np.array([[3, 1, 2, 1], [1, 1, 1, 3]])
    assert costs.tokens_per_step(passes, 3) == [4, 1.5, 1]
