"""Cases of exercise 19: the capacities against their definition, the router against a NumPy
version of expert-choice routing (top-k among the candidates, the score-weighted update, the
block run on the selected tokens alone, in position order), its gradients against finite
differences of that version, and the compute per token against the sums written out.

The block of these cases, f(s) = tanh(s W + s_first) with s_first the first selected token's
state, mixes the tokens it is given and depends on their order, so a router that runs the block
on every token, or hands it the tokens in score order, computes something else.

Each probe calls ``router`` (the student's module) on inputs the grader draws (``given``) or fixed
by hand, and returns arrays and numbers; the judges, run by the grader, check them against what
this file computes itself (the capacities a router must use among them). The capacities and the
NumPy routing are tasks 1 and 2's answers, so they sit with the hidden cases, which the release
leaves out: a visible case compares with hand-worked values or with the reference solution
(``ref``) on the same inputs."""
import math

import numpy as np

import minishare
from minishare import functional as F
from minishare.grader.cases import case, raises


# --------------------------------------------------------------------------- task 1: capacities
@case("ex19_task1")
def test_capacities_hand_worked(router):
    return [router.capacity_tokens([1, 0.5, 0.25], 8), router.capacity_tokens([1, 0.1], 7),
            router.capacity_tokens([0.75, 0.75, 0.5], 4)]


@test_capacities_hand_worked.judge
def _(out, ref):
    assert out[0] == [8, 4, 2], out[0]
    assert out[1] == [7, 1], f"{out[1]}: ⌊0.7⌋ = 0 tokens, but every step takes at least one"
    assert out[2] == [3, 3, 2], out[2]


# --------------------------------------------------------------------------- task 2: the router
def block_tensor(W):
    """The block as the router calls it, on a Tensor W (a constant, or a leaf that wants its gradient)."""
    return lambda r, s: F.tanh(s @ W + s[:, :1])


def route_inputs(rng, B, T, H, capacities, zero_weights=False):
    """The grader's draw: x, the block's W, and each step's router weights (zero: every score ties)."""
    n = len(capacities)
    return {"capacities": capacities, "x": rng.standard_normal((B, T, H)), "W": 0.5 * rng.standard_normal((H, H)),
            "router_w": np.zeros((n, H)) if zero_weights else rng.standard_normal((n, H)),
            "router_b": 0.1 * rng.standard_normal(n)}


def make_router(router, given):
    """The student's router in float64 with the router weights of ``given``."""
    module = router.ExpertChoiceRouter(given["x"].shape[-1], given["capacities"]).double()
    for lin, w, b in zip(module.routers, given["router_w"], given["router_b"]):
        lin.weight.data, lin.bias.data = w[None, :], np.array([b])
    return module


def probe_route(router, given):
    module = make_router(router, given)
    h, active = module(minishare.tensor(given["x"]), block_tensor(minishare.tensor(given["W"])))
    return {"h": h.numpy(), "active": np.asarray(active).astype(np.int64)}


def same_route(out, ref):
    """Judge helper of the visible cases: the tokens each step took, and the states, equal the
    reference solution's on the same inputs."""
    got, want = out["active"], ref["active"]
    for r in range(len(want)):
        counts, k = got[r].sum(axis=1), int(want[r].sum(axis=1)[0])
        assert (counts == k).all(), f"step {r}: {counts.tolist()} tokens took it per sequence, capacity k = {k}"
    assert (got == want).all(), f"the tokens selected differ: got\n{got}\nexpected\n{want}"
    np.testing.assert_allclose(out["h"], ref["h"], rtol=1e-9, atol=1e-10)


@case("ex19_task2")
def test_router_selects_and_updates(router, given):
    return probe_route(router, given)


@test_router_selects_and_updates.given
def _(rng):
    return route_inputs(rng, B=2, T=6, H=4, capacities=[1, 0.5, 0.34])


@test_router_selects_and_updates.judge
def _(out, ref):
    same_route(out, ref)


def probe_gradients(router, given):
    """x, the block's W and every router get the gradient of Σ v ⊙ h."""
    module = make_router(router, given)
    x = minishare.tensor(given["x"], requires_grad=True)
    W = minishare.tensor(given["W"], requires_grad=True)
    h, _ = module(x, block_tensor(W))
    h.backward(minishare.tensor(given["v"]))
    return {"x": x.grad, "W": W.grad,
            "router_w": np.stack([np.zeros(W.shape[0]) if lin.weight.grad is None else lin.weight.grad[0]
                                  for lin in module.routers])}


def gradient_inputs(rng, B, T, H, capacities):
    """The router's draw and a cotangent v for h."""
    return {**route_inputs(rng, B, T, H, capacities), "v": rng.standard_normal((B, T, H))}


@case("ex19_task2")
def test_router_gradients(router, given):
    return probe_gradients(router, given)


@test_router_gradients.given
def _(rng):
    return gradient_inputs(rng, B=1, T=4, H=3, capacities=[1, 0.5])


@test_router_gradients.judge
def _(out, ref):
    for name in ("x", "W", "router_w"):
        np.testing.assert_allclose(out[name], ref[name], rtol=1e-9, atol=1e-12, err_msg=f"the gradient of {name}")


# --------------------------------------------------------------------------- task 3: compute
@case("ex19_task3")
def test_compute_per_token_by_hand(router):
    return {"mor": router.mor_macs_per_token(4, 8, 8, [1, 0.5, 0.25]),
            "act": router.act_macs_per_token(4, 8, np.array([[2, 1, 1, 2]]), 2)}


@test_compute_per_token_by_hand.judge
def _(out, ref):
    # MoR, H = 4, I = 8, T = 8: k = 8, 4, 2 selected of n = 8, 8, 4 candidates;
    #   projections and FFN 14 · 128 = 1792, attention 2·4·(64 + 16 + 4) = 672, router 20 · 4 = 80
    assert math.isclose(out["mor"], (1792 + 672 + 80) / 8), out["mor"]
    # ACT, T = 4: 4 tokens take step 0, 2 take step 1; each costs 64 + 64 + 2·4·4 + 4 = 164
    assert math.isclose(out["act"], (4 + 2) * 164 / 4), out["act"]


### BEGIN HIDDEN TESTS
# The capacities and expert-choice routing in NumPy, for the hidden judges: tasks 1 and 2's
# answers, so the release must not ship them.
def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def block_numpy(s, W):
    return np.tanh(s @ W + s[:, :1])                                    # (B, k, H)


def route_numpy(x, router_w, router_b, W, ks):
    """Expert-choice routing written out, one sequence at a time: (h, active (N_r, B, T) ints)."""
    B, T, _ = x.shape
    h = x.copy()
    active = np.zeros((len(ks), B, T), dtype=np.int64)
    for b in range(B):
        candidates = list(range(T))
        for r, k in enumerate(ks):
            g = sigmoid(h[b, candidates] @ router_w[r] + router_b[r])          # one score per candidate
            best = sorted(range(len(candidates)), key=lambda j: (-g[j], j))[:k]   # ties: the earlier
            chosen = sorted(candidates[j] for j in best)                     # in position order
            weight = {candidates[j]: g[j] for j in best}
            f = block_numpy(h[b, chosen][None], W)[0]                       # the chosen tokens together
            h[b, chosen] += np.array([weight[t] for t in chosen])[:, None] * f
            active[r, b, chosen] = 1
            candidates = chosen
    return h, active


def capacity_reference(capacities, T):
    return [max(1, math.floor(c * T + 1e-9)) for c in capacities]


def judge_route(out, given):
    ks = capacity_reference(given["capacities"], given["x"].shape[1])
    h, active = route_numpy(given["x"], given["router_w"], given["router_b"], given["W"], ks)
    got = out["active"]
    assert got.shape == active.shape, f"active has shape {got.shape}, expected (N_r, B, T) = {active.shape}"
    for r, k in enumerate(ks):
        counts = got[r].sum(axis=1)
        assert (counts == k).all(), f"step {r}: {counts.tolist()} tokens took it per sequence, capacity k = {k}"
    assert (got == active).all(), f"the tokens selected differ: got\n{got}\nexpected\n{active}"
    np.testing.assert_allclose(out["h"], h, rtol=1e-9, atol=1e-10)


def assert_gradients(out, given):
    ks = capacity_reference(given["capacities"], given["x"].shape[1])

    def phi(arrays):
        h, _ = route_numpy(arrays["x"], arrays["router_w"], given["router_b"], arrays["W"], ks)
        return float((given["v"] * h).sum())
    eps = 1e-6
    for name in ("x", "W", "router_w"):
        got = out[name]
        assert got is not None, f"{name}: no gradient"
        for index in np.ndindex(*given[name].shape):
            moved = []
            for sign in (1, -1):
                arrays = {k: np.array(given[k], dtype=float) for k in ("x", "W", "router_w")}
                arrays[name][index] += sign * eps
                moved.append(phi(arrays))
            numeric = (moved[0] - moved[1]) / (2 * eps)
            assert math.isclose(float(got[index]), numeric, rel_tol=1e-5, abs_tol=1e-7), \
                f"d/d {name}{list(index)}: {float(got[index])!r}, finite differences {numeric!r}"


@case("ex19_task1")
def test_capacities_for_many_lengths(router):
    schedules = ([1], [1, 1, 1], [1, 0.6, 0.3], [0.5, 0.5, 0.2], [1, 0.75, 0.5, 0.25], [0.9, 0.3, 0.05])
    return {f"{i} {T}": router.capacity_tokens(list(c), T) for i, c in enumerate(schedules) for T in (1, 3, 8, 13, 24)}


@test_capacities_for_many_lengths.judge
def _(out, ref):
    schedules = ([1], [1, 1, 1], [1, 0.6, 0.3], [0.5, 0.5, 0.2], [1, 0.75, 0.5, 0.25], [0.9, 0.3, 0.05])
    for key, ks in out.items():
        i, T = map(int, key.split())
        assert list(ks) == capacity_reference(schedules[i], T), (schedules[i], T, ks)


@case("ex19_task1")
def test_capacities_that_cannot_be_routed(router):
    return {"empty": raises(ValueError, router.capacity_tokens, [], 8),
            "zero": raises(ValueError, router.capacity_tokens, [1, 0], 8),
            "above one": raises(ValueError, router.capacity_tokens, [1.5], 8),
            "growing": raises(ValueError, router.capacity_tokens, [1, 0.25, 0.5], 8),
            "negative": raises(ValueError, router.capacity_tokens, [-0.5], 8)}


@test_capacities_that_cannot_be_routed.judge
def _(out, ref):
    refused = [k for k, v in out.items() if v is not True]
    assert not refused, f"not refused with a ValueError: {refused}"


@case("ex19_task2")
def test_router_other_shapes(router, given):
    return probe_route(router, given)


@test_router_other_shapes.given
def _(rng):
    return route_inputs(rng, B=3, T=8, H=5, capacities=[1, 0.75, 0.5, 0.25])


@test_router_other_shapes.judge
def _(out, ref, given):
    judge_route(out, given)


@case("ex19_task2")
def test_router_first_step_below_full_capacity(router, given):
    """The first step need not take every token; the next chooses among those it took."""
    return probe_route(router, given)


@test_router_first_step_below_full_capacity.given
def _(rng):
    return route_inputs(rng, B=2, T=7, H=3, capacities=[0.6, 0.3, 0.3])


@test_router_first_step_below_full_capacity.judge
def _(out, ref, given):
    judge_route(out, given)


@case("ex19_task2")
def test_router_ties_go_to_the_earlier_position(router, given):
    """Zero router weights: every score is σ(b), so each step takes its first k candidates."""
    return probe_route(router, given)


@test_router_ties_go_to_the_earlier_position.given
def _(rng):
    return route_inputs(rng, B=2, T=6, H=3, capacities=[1, 0.5, 0.34], zero_weights=True)


@test_router_ties_go_to_the_earlier_position.judge
def _(out, ref, given):
    np.testing.assert_array_equal(out["active"][1], [[1, 1, 1, 0, 0, 0]] * 2)
    np.testing.assert_array_equal(out["active"][2], [[1, 1, 0, 0, 0, 0]] * 2)
    judge_route(out, given)


@case("ex19_task2")
def test_router_gradients_three_steps(router, given):
    return probe_gradients(router, given)


@test_router_gradients_three_steps.given
def _(rng):
    return gradient_inputs(rng, B=2, T=3, H=2, capacities=[1, 0.67, 0.34])


@test_router_gradients_three_steps.judge
def _(out, ref, given):
    assert_gradients(out, given)


# --------------------------------------------------------------------------- task 3: the references
def mor_reference(H, I, T, capacities):
    total, candidates = 0, T
    for k in capacity_reference(capacities, T):
        total += k * 4 * H * H + k * 2 * H * I      # projections and FFN of the selected
        total += 2 * k * k * H                      # each selected query against each selected key
        total += candidates * H                     # the router on this step's candidates
        candidates = k
    return total / T


def act_reference(H, I, passes, max_steps):
    B, T = passes.shape
    total = 0.0
    for b in range(B):
        for n in range(max_steps):
            m = int((passes[b] > n).sum())
            total += m * (4 * H * H + 2 * H * I + 2 * T * H + H) / B
    return total / T


@case("ex19_task3")
def test_compute_per_token(router, given):
    passes = given["passes"]
    return {"mor": [router.mor_macs_per_token(4, 8, 8, [1, 0.5, 0.25]),
                    router.mor_macs_per_token(16, 64, 24, [1, 0.75, 0.5, 0.25]),
                    router.mor_macs_per_token(8, 8, 5, [0.6, 0.2])],
            "act": [router.act_macs_per_token(4, 8, passes, 4), router.act_macs_per_token(16, 32, passes, 5)]}


@test_compute_per_token.given
def _(rng):
    return {"passes": rng.integers(1, 5, size=(2, 8))}              # ACT's steps per token, at most 4


@test_compute_per_token.judge
def _(out, ref, given):
    expected = [mor_reference(4, 8, 8, [1, 0.5, 0.25]), mor_reference(16, 64, 24, [1, 0.75, 0.5, 0.25]),
                mor_reference(8, 8, 5, [0.6, 0.2])]
    for got, want in zip(out["mor"], expected):
        assert math.isclose(got, want, rel_tol=1e-12), f"MoR: {got}, expected {want}"
    assert math.isclose(expected[0], 318.0), expected[0]          # by hand: (1792 + 672 + 80) / 8
    for got, want in zip(out["act"], [act_reference(4, 8, given["passes"], 4), act_reference(16, 32, given["passes"], 5)]):
        assert math.isclose(got, want, rel_tol=1e-12), f"ACT: {got}, expected {want}"
### END HIDDEN TESTS

