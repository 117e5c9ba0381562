"""Cases of exercise 17: the schedule against its definition written as a loop, the looped block
against a NumPy version of its one Post-LN layer iterated with the input re-injected, and its
gradients (full, and truncated to the last k iterations) against finite differences of that
version, where truncation means the state s_{r−k} is held fixed.

Each probe calls ``loop`` (the student's module), on inputs the grader draws (``given``) in the
random cases, and returns arrays and numbers; the judges, run by the grader, check them against
what this file computes itself. The loop schedule and the NumPy block are the tasks' answers, so
they sit with the hidden cases, which the release leaves out: a visible case compares with
hand-worked values or with the reference solution (``ref``); the block's parameters are the
reference's, drawn from the same seed by the same given __init__."""
import math

import numpy as np

import minishare
from minishare.grader.cases import case, raises


# --------------------------------------------------------------------------- task 1: the schedule
@case("ex17_task1")
def test_schedule_hand_worked(loop):
    return [loop.looped_schedule(1, 1, 1, 3), loop.looped_schedule(0, 2, 0, 2)]


@test_schedule_hand_worked.judge
def _(out, ref):
    assert out[0] == [0, 1, 1, 1, 2], out[0]        # A B B B C
    assert out[1] == [0, 1, 0, 1], out[1]           # (A B) twice, no prelude or coda


# --------------------------------------------------------------------------- task 2: the block
LAYER = {"attention.sublayer.query": "linear", "attention.sublayer.key": "linear",
         "attention.sublayer.value": "linear", "attention.sublayer.dense": "linear",
         "attention.LayerNorm": "norm", "ffn.sublayer.ffn": "linear",
         "ffn.sublayer.ffn_output": "linear", "ffn.LayerNorm": "norm"}


def one_layer_count(H, intermediate):
    """Parameters of one Post-LN layer: attention 4H² + 4H, FFN 2·H·I + I + H, two LayerNorms 4H."""
    return 4 * H * H + 4 * H + 2 * H * intermediate + intermediate + H + 4 * H


def perturbed_block(loop, H, heads, intermediate, seed):
    """The student's block in float64, every parameter moved off its initial value."""
    minishare.manual_seed(seed)
    block = loop.LoopedBlock(H, heads, intermediate).double()
    rng = np.random.default_rng(seed)
    for p in block.parameters():
        p.data = p.data + 0.1 * rng.standard_normal(p.shape)
    return block


def named_arrays(block):
    return {name: p.numpy() for name, p in block.named_parameters()}


def gradients(block, x):
    return {"x": None if x.grad is None else np.asarray(x.grad, dtype=float),
            **{name: (None if p.grad is None else np.asarray(p.grad, dtype=float))
               for name, p in block.named_parameters()}}


def assert_one_layer(out, H, intermediate):
    names = {f"{module}.{part}" for module in LAYER for part in ("weight", "bias")}
    assert set(out["parameters"]) == names, \
        f"parameters {sorted(set(out['parameters']) ^ names)} differ from ONE layer's (attention, ffn)"
    assert out["count"] == one_layer_count(H, intermediate), \
        f"{out['count']:,} parameters; one layer has {one_layer_count(H, intermediate):,}"


@case("ex17_task2")
def test_one_layer_iterated_with_the_input_reinjected(loop):
    block = perturbed_block(loop, 8, 2, 16, seed=0)
    rng = np.random.default_rng(1)
    x, s = rng.standard_normal((2, 4, 8)), rng.standard_normal((2, 4, 8))
    return {"count": minishare.count_parameters(block), "parameters": named_arrays(block),
            "out": block.iterate(minishare.tensor(s), minishare.tensor(x), 3).numpy()}


@test_one_layer_iterated_with_the_input_reinjected.judge
def _(out, ref):
    assert_one_layer(out, 8, 16)
    np.testing.assert_allclose(out["out"], ref["out"], rtol=1e-9, atol=1e-10)


# --------------------------------------------------------------------------- task 3: truncation
@case("ex17_task3")
def test_forward_starts_from_zero_and_truncation_keeps_it(loop):
    block = perturbed_block(loop, 8, 2, 16, seed=2)
    x = np.random.default_rng(3).standard_normal((2, 3, 8))
    return {"full": block(minishare.tensor(x), 4).numpy(),
            "truncated": block(minishare.tensor(x), 4, backprop_iterations=1).numpy()}


@test_forward_starts_from_zero_and_truncation_keeps_it.judge
def _(out, ref):
    np.testing.assert_allclose(out["full"], ref["full"], rtol=1e-9, atol=1e-10)
    # truncation changes the gradient, never the output
    np.testing.assert_allclose(out["truncated"], ref["full"], rtol=1e-9, atol=1e-10)


### BEGIN HIDDEN TESTS
# The schedule and the block in NumPy, for the hidden judges: the tasks' answers, so the release
# must not ship them.
def schedule_reference(P, R, C, r):
    """Position by position: prelude, then r rounds of the block, then coda."""
    out = []
    for i in range(P):
        out.append(i)
    for _ in range(r):
        for j in range(R):
            out.append(P + j)
    for i in range(C):
        out.append(P + R + i)
    return out


def layer_norm(z, weight, bias, eps=1e-12):
    mean = z.mean(axis=-1, keepdims=True)
    var = ((z - mean) ** 2).mean(axis=-1, keepdims=True)
    return (z - mean) / np.sqrt(var + eps) * weight + bias


def linear(P, name, z):
    return z @ P[f"{name}.weight"].T + P[f"{name}.bias"]


def attention(P, z, heads):
    B, T, H = z.shape
    d = H // heads

    def split(t):
        return t.reshape(B, T, heads, d).transpose(0, 2, 1, 3)           # (B, heads, T, d)
    q, k, v = (split(linear(P, f"attention.sublayer.{n}", z)) for n in ("query", "key", "value"))
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d)                  # (B, heads, T, T)
    scores = scores - scores.max(axis=-1, keepdims=True)
    probs = np.exp(scores)
    probs /= probs.sum(axis=-1, keepdims=True)
    return linear(P, "attention.sublayer.dense", (probs @ v).transpose(0, 2, 1, 3).reshape(B, T, H))


def layer_numpy(P, z, heads):
    """The one Post-LN layer: self-attention, then a ReLU FFN, each in its residual and LayerNorm."""
    z = layer_norm(z + attention(P, z, heads), P["attention.LayerNorm.weight"], P["attention.LayerNorm.bias"])
    hidden = np.maximum(linear(P, "ffn.sublayer.ffn", z), 0.0)
    return layer_norm(z + linear(P, "ffn.sublayer.ffn_output", hidden), P["ffn.LayerNorm.weight"],
                      P["ffn.LayerNorm.bias"])


def iterate_numpy(P, s, x, n, heads):
    """n iterations of s <- layer(s + x): the looped block in NumPy."""
    for _ in range(n):
        s = layer_numpy(P, s + x, heads)
    return s


@case("ex17_task1")
def test_schedule_for_many_shapes(loop):
    shapes = [(P, R, C, r) for P in (0, 1, 3) for R in (1, 2, 3) for C in (0, 1, 2) for r in (1, 2, 5)]
    return {" ".join(map(str, shape)): list(loop.looped_schedule(*shape)) for shape in shapes}


@test_schedule_for_many_shapes.judge
def _(out, ref):
    for key, schedule in out.items():
        P, R, C, r = map(int, key.split())
        assert schedule == schedule_reference(P, R, C, r), (key, schedule)


@case("ex17_task1")
def test_schedule_refuses_what_is_no_looped_stack(loop):
    return {"no block": raises(ValueError, loop.looped_schedule, 1, 0, 1, 2),
            "no iteration": raises(ValueError, loop.looped_schedule, 1, 1, 1, 0),
            "negative prelude": raises(ValueError, loop.looped_schedule, -1, 1, 0, 2),
            "negative coda": raises(ValueError, loop.looped_schedule, 0, 1, -1, 2)}


@test_schedule_refuses_what_is_no_looped_stack.judge
def _(out, ref):
    refused = [k for k, v in out.items() if v is not True]
    assert not refused, f"not refused with a ValueError: {refused}"


def draws(rng, shape, *names):
    """The grader's inputs: a seed for the block's parameters and one array of ``shape`` per name."""
    return {"seed": int(rng.integers(2 ** 31)), **{name: rng.standard_normal(shape) for name in names}}


@case("ex17_task2")
def test_zero_iterations_and_other_shapes(loop, given):
    block = perturbed_block(loop, 8, 4, 12, seed=given["seed"])
    x, s = minishare.tensor(given["x"]), minishare.tensor(given["s"])
    return {"count": minishare.count_parameters(block), "parameters": named_arrays(block),
            "zero": block.iterate(s, x, 0).numpy(), "five": block.iterate(s, x, 5).numpy()}


@test_zero_iterations_and_other_shapes.given
def _(rng):
    return draws(rng, (3, 5, 8), "x", "s")


@test_zero_iterations_and_other_shapes.judge
def _(out, ref, given):
    assert_one_layer(out, 8, 12)
    np.testing.assert_allclose(out["zero"], given["s"], atol=1e-12)
    np.testing.assert_allclose(out["five"], iterate_numpy(out["parameters"], given["s"], given["x"], 5, heads=4),
                               rtol=1e-9, atol=1e-10)


CHECKED = [("ffn.sublayer.ffn.weight", (0, 0)), ("ffn.sublayer.ffn.weight", (5, 3)),
           ("ffn.sublayer.ffn_output.bias", (1,)), ("attention.sublayer.query.weight", (1, 2)),
           ("attention.sublayer.value.weight", (3, 0)), ("attention.LayerNorm.weight", (2,)),
           ("ffn.LayerNorm.bias", (0,)), ("x", (0, 1, 2)), ("x", (0, 2, 0))]


def assert_gradients(out, x0, function):
    """Every checked entry of the gradients against central differences of ``function(P, x)``
    (a scalar) around the parameters ``out`` reports and the input ``x0``, where the entry moves
    in P or in x."""
    h = 1e-6
    for name, index in CHECKED:
        got = out["grads"].get(name)
        assert got is not None, f"{name}: no gradient"
        moved = []
        for sign in (1, -1):
            P = {k: a.copy() for k, a in out["parameters"].items()}
            x = x0.copy()
            (x if name == "x" else P[name])[index] += sign * h
            moved.append(function(P, x))
        numeric = (moved[0] - moved[1]) / (2 * h)
        assert math.isclose(float(got[index]), numeric, rel_tol=1e-5, abs_tol=1e-7), \
            f"d/d {name}{list(index)}: {float(got[index])!r}, finite differences {numeric!r}"


@case("ex17_task2")
def test_full_gradient_is_the_sum_over_iterations(loop, given):
    """The one layer's gradient collects every iteration's use, and x's every injection."""
    block = perturbed_block(loop, 4, 2, 8, seed=given["seed"])
    x = minishare.tensor(given["x"], requires_grad=True)
    block.iterate(minishare.tensor(np.zeros((1, 3, 4))), x, 3).backward(minishare.tensor(given["v"]))
    return {"parameters": named_arrays(block), "grads": gradients(block, x)}


@test_full_gradient_is_the_sum_over_iterations.given
def _(rng):
    return draws(rng, (1, 3, 4), "x", "v")


@test_full_gradient_is_the_sum_over_iterations.judge
def _(out, ref, given):
    v = given["v"]
    assert_gradients(out, given["x"], lambda P, x: float((v * iterate_numpy(P, np.zeros_like(x), x, 3, heads=2)).sum()))


@case("ex17_task3")
def test_truncated_gradient_holds_the_early_state_fixed(loop, given):
    """r = 5, k = 2: against finite differences of the last 2 iterations run from s_3, a constant
    computed once (moving a parameter or x does not move it)."""
    block = perturbed_block(loop, 4, 2, 8, seed=given["seed"])
    x = minishare.tensor(given["x"], requires_grad=True)
    block(x, 5, backprop_iterations=2).backward(minishare.tensor(given["v"]))
    return {"parameters": named_arrays(block), "grads": gradients(block, x)}


@test_truncated_gradient_holds_the_early_state_fixed.given
def _(rng):
    return draws(rng, (1, 3, 4), "x", "v")


@test_truncated_gradient_holds_the_early_state_fixed.judge
def _(out, ref, given):
    v, P0, x0 = given["v"], out["parameters"], given["x"]
    fixed = iterate_numpy(P0, np.zeros_like(x0), x0, 3, heads=2)           # s_3 at the unmoved values
    assert_gradients(out, x0, lambda P, x: float((v * iterate_numpy(P, fixed, x, 2, heads=2)).sum()))


@case("ex17_task3")
def test_k_of_r_or_more_is_full_backpropagation(loop, given):
    block = perturbed_block(loop, 4, 2, 8, seed=given["seed"])
    out = {"parameters": named_arrays(block)}
    for k in (3, 7, None):
        block.zero_grad()
        x = minishare.tensor(given["x"], requires_grad=True)
        block(x, 3, backprop_iterations=k).backward(minishare.tensor(given["v"]))
        out[f"grads {k}"] = gradients(block, x)
    return out


@test_k_of_r_or_more_is_full_backpropagation.given
def _(rng):
    return draws(rng, (1, 3, 4), "x", "v")


@test_k_of_r_or_more_is_full_backpropagation.judge
def _(out, ref, given):
    v = given["v"]
    for k in ("3", "7", "None"):
        assert_gradients({**out, "grads": out[f"grads {k}"]}, given["x"],
                         lambda P, x: float((v * iterate_numpy(P, np.zeros_like(x), x, 3, heads=2)).sum()))


@case("ex17_task3")
def test_one_backpropagated_iteration_of_many(loop, given):
    block = perturbed_block(loop, 4, 2, 8, seed=given["seed"])
    x = minishare.tensor(given["x"], requires_grad=True)
    block(x, 6, backprop_iterations=1).backward(minishare.tensor(given["v"]))
    return {"parameters": named_arrays(block), "grads": gradients(block, x)}


@test_one_backpropagated_iteration_of_many.given
def _(rng):
    return draws(rng, (2, 3, 4), "x", "v")


@test_one_backpropagated_iteration_of_many.judge
def _(out, ref, given):
    v, P0, x0 = given["v"], out["parameters"], given["x"]
    fixed = iterate_numpy(P0, np.zeros_like(x0), x0, 5, heads=2)
    assert_gradients(out, x0, lambda P, x: float((v * iterate_numpy(P, fixed, x, 1, heads=2)).sum()))
### END HIDDEN TESTS
