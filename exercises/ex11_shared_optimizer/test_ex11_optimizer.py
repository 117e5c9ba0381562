"""Cases of exercise 11: a weight shared by several layers, listed once per layer, must move and
keep state as one tensor; Adam's steps are worked out by hand, and in the hidden cases in NumPy
(``adam_by_hand``: task 2's answer, so it sits with the hidden cases, which the release leaves
out), norms by hand.

Each probe calls ``optimizer`` (the student's module) and returns the parameters' values and
gradients as arrays; the judges compare them with the NumPy computations of this file. Random
gradients and orders are the grader's (``given``), a hidden case's drawn anew for every
submission."""
import math

import numpy as np

import minishare
from minishare.grader.cases import case
from minishare.models import AlbertConfig, AlbertForPreTraining
from minishare.nn import Linear, Parameter


def shared_stack(L=3):
    """L 'layers' that all use one Linear: the naive list holds its two tensors L times."""
    minishare.manual_seed(0)
    layer = Linear(2, 2).double()
    naive = [p for _ in range(L) for p in layer.parameters()]
    return layer, naive


def names_of(result, named):
    """The names (from ``named``: {name: object}) of the objects in ``result``, by identity;
    "another object" for anything else."""
    by_id = {id(p): name for name, p in named.items()}
    return [by_id.get(id(p), "another object") for p in result]


@case("ex11_task1")
def test_distinct_by_identity_in_order(optimizer):
    a, b, c = Parameter(np.zeros(2)), Parameter(np.zeros(2)), Parameter(np.zeros(2))   # equal values
    named = {"a": a, "b": b, "c": c}
    return [names_of(optimizer.distinct([a, b, a, a, b]), named), names_of(optimizer.distinct([b, a]), named),
            names_of(optimizer.distinct([a, c]), named)]


@test_distinct_by_identity_in_order.judge
def _(out, ref):
    assert out == [["a", "b"], ["b", "a"], ["a", "c"]], out      # equal values, different tensors: both


@case("ex11_task2")
def test_first_adam_step_moves_a_shared_weight_once(optimizer):
    """On the first step m̂ = g and v̂ = g², so each coordinate moves by lr · g / (|g| + ε), about
    lr · sign(g): once, however many times the naive list holds the tensor."""
    layer, naive = shared_stack()
    before = layer.weight.data.copy()
    layer.weight.grad = np.array([[1.0, -2.0], [0.5, 4.0]])
    adam = optimizer.Adam(naive, lr=0.1)
    adam.step()
    return {"before": before, "after": layer.weight.data, "states": len(adam.state)}


@test_first_adam_step_moves_a_shared_weight_once.judge
def _(out, ref):
    g = np.array([[1.0, -2.0], [0.5, 4.0]])
    np.testing.assert_allclose(out["after"], out["before"] - 0.1 * g / (np.abs(g) + 1e-8), rtol=1e-12)
    assert out["states"] == 1, f"{out['states']} states: the bias had no grad, the weight is one tensor"


@case("ex11_task3")
def test_norm_counts_a_shared_gradient_once(optimizer):
    layer, naive = shared_stack()
    layer.weight.grad = np.array([[3.0, 0.0], [0.0, 0.0]])
    layer.bias.grad = np.array([0.0, 4.0])
    return {"norm": optimizer.clip_grad_norm_(naive, max_norm=100.0), "bias grad": layer.bias.grad}


@test_norm_counts_a_shared_gradient_once.judge
def _(out, ref):
    assert isinstance(out["norm"], float) and math.isclose(out["norm"], 5.0, rel_tol=1e-12), out["norm"]
    np.testing.assert_allclose(out["bias grad"], [0.0, 4.0], rtol=1e-15)


### BEGIN HIDDEN TESTS
def adam_by_hand(p0, grads, lr, betas, eps):
    """Adam on one tensor (Kingma & Ba, 2015, Algorithm 1) from ``p0`` with the gradients
    ``grads`` (None: the tensor has no gradient at that step and is skipped, its t included).
    Returns the value after every step."""
    beta1, beta2 = betas
    p, m, v, t, values = np.asarray(p0, dtype=np.float64), 0.0, 0.0, 0, []
    for g in grads:
        if g is not None:
            t += 1
            m, v = beta1 * m + (1 - beta1) * g, beta2 * v + (1 - beta2) * g * g
            p = p - lr * (m / (1 - beta1 ** t)) / (np.sqrt(v / (1 - beta2 ** t)) + eps)
        values.append(p)
    return values


@case("ex11_task1")
def test_distinct_keeps_first_appearance_not_creation_order(optimizer, given):
    """Twenty tensors listed in an order unlike the order they were made in, with repeats, and
    given as a generator (as ``model.parameters()`` is)."""
    made = [Parameter(np.full(2, float(i % 3))) for i in range(20)]
    named = {str(i): p for i, p in enumerate(made)}
    order = given["order"]
    listed = [made[i] for i in order] + [made[i] for i in order[::-2]] + [made[order[3]]]
    return {"from a list": names_of(optimizer.distinct(listed), named),
            "from a generator": names_of(optimizer.distinct(p for p in listed), named)}


@test_distinct_keeps_first_appearance_not_creation_order.given
def _(rng):
    return {"order": rng.permutation(20).tolist()}


@test_distinct_keeps_first_appearance_not_creation_order.judge
def _(out, ref, given):
    order = [str(i) for i in given["order"]]
    assert out["from a list"] == order, out["from a list"]
    assert out["from a generator"] == order, out["from a generator"]


@case("ex11_task2")
def test_two_adam_steps_by_hand(optimizer):
    layer, naive = shared_stack(L=4)
    w0 = layer.weight.data.copy()
    adam = optimizer.Adam(naive, lr=0.01, betas=(0.8, 0.9), eps=1e-6)
    for g in (np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[-1.0, 0.5], [2.0, -3.0]])):
        layer.weight.grad = g
        adam.step()
    return {"w0": w0, "w": layer.weight.data, "step": adam.state[id(layer.weight)]["step"]}


@test_two_adam_steps_by_hand.judge
def _(out, ref):
    grads = [np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[-1.0, 0.5], [2.0, -3.0]])]
    np.testing.assert_allclose(out["w"], adam_by_hand(out["w0"], grads, 0.01, (0.8, 0.9), 1e-6)[-1], rtol=1e-12)
    assert out["step"] == 2, out["step"]


@case("ex11_task2")
def test_tensors_that_start_late_or_skip_steps_count_their_own(optimizer, given):
    """A tensor's t counts the steps at which it had a gradient: one counter for the optimizer
    would give q, which first gets a gradient at step 3, the bias correction of step 3."""
    params = {name: Parameter(value.copy()) for name, value in given["start"].items()}
    p, q, r = params["p"], params["q"], params["r"]
    adam = optimizer.Adam([p, q, p, r, q], lr=0.05, betas=(0.9, 0.99), eps=1e-8)
    values = {name: [] for name in params}
    for step in range(4):
        for name, tensor in params.items():
            g = given["grads"][name][step]
            tensor.grad = None if g is None else g.copy()
        adam.step()
        for name, tensor in params.items():
            values[name].append(tensor.data.copy())
    return {"values": values, "steps": {n: adam.state[id(t)]["step"] for n, t in params.items()}}


@test_tensors_that_start_late_or_skip_steps_count_their_own.given
def _(rng):
    steps = {"p": [1, 1, 1, 1], "q": [0, 0, 1, 1], "r": [1, 0, 1, 0]}   # q starts late, r skips steps
    return {"start": {name: rng.standard_normal(2) for name in steps},
            "grads": {name: [rng.standard_normal(2) if has else None for has in has_grad]   # None: no gradient
                      for name, has_grad in steps.items()}}


@test_tensors_that_start_late_or_skip_steps_count_their_own.judge
def _(out, ref, given):
    for name, grads in given["grads"].items():
        expected = adam_by_hand(given["start"][name], grads, 0.05, (0.9, 0.99), 1e-8)
        np.testing.assert_allclose(np.array(out["values"][name]), np.array(expected), rtol=1e-12,
                                   err_msg=f"tensor {name}")
    assert out["steps"] == {"p": 4, "q": 2, "r": 2}, out["steps"]


@case("ex11_task2")
def test_two_optimizers_keep_their_own_counts(optimizer):
    """Two Adams on two tensors, stepped 3 times and once: each tensor's t is its own."""
    a, b = Parameter(np.array([1.0, -1.0])), Parameter(np.array([2.0, 0.5]))
    first, second = optimizer.Adam([a, a], lr=0.1), optimizer.Adam([b], lr=0.1)
    for _ in range(3):
        a.grad = np.array([0.3, -0.7])
        first.step()
    b.grad = np.array([-1.5, 0.25])
    second.step()
    return {"a": a.data, "b": b.data}


@test_two_optimizers_keep_their_own_counts.judge
def _(out, ref):
    a = adam_by_hand([1.0, -1.0], [np.array([0.3, -0.7])] * 3, 0.1, (0.9, 0.999), 1e-8)[-1]
    b = adam_by_hand([2.0, 0.5], [np.array([-1.5, 0.25])], 0.1, (0.9, 0.999), 1e-8)[-1]
    np.testing.assert_allclose(out["a"], a, rtol=1e-12)
    np.testing.assert_allclose(out["b"], b, rtol=1e-12)


class Tied(minishare.nn.Module):
    """A V × E table used as the input embedding and as the output projection."""

    def __init__(self):
        super().__init__()
        minishare.manual_seed(2)
        self.embedding = minishare.nn.Embedding(5, 3).double()
        self.output = Linear(3, 5).double()
        self.output.weight = self.embedding.weight


@case("ex11_task2")
def test_a_tied_table_moves_once_per_step(optimizer, given):
    """The table is listed under both of its names (``remove_duplicate=False``): three steps must
    follow Adam on one tensor with the summed gradient."""
    model = Tied()
    naive = [p for _, p in model.named_parameters(remove_duplicate=False)]
    table0, bias0 = model.embedding.weight.data.copy(), model.output.bias.data.copy()
    adam = optimizer.Adam(naive, lr=0.02)
    for g_table, g_bias in zip(given["table grads"], given["bias grads"]):
        model.embedding.weight.grad, model.output.bias.grad = g_table.copy(), g_bias.copy()
        adam.step()
    return {"listed": len(naive), "table0": table0, "bias0": bias0,
            "table": model.embedding.weight.data, "bias": model.output.bias.data,
            "still tied": model.output.weight is model.embedding.weight}


@test_a_tied_table_moves_once_per_step.given
def _(rng):
    return {"table grads": [rng.standard_normal((5, 3)) for _ in range(3)],
            "bias grads": [rng.standard_normal(5) for _ in range(3)]}


@test_a_tied_table_moves_once_per_step.judge
def _(out, ref, given):
    assert out["listed"] == 3 and out["still tied"], out["listed"]
    tables = adam_by_hand(out["table0"], given["table grads"], 0.02, (0.9, 0.999), 1e-8)
    biases = adam_by_hand(out["bias0"], given["bias grads"], 0.02, (0.9, 0.999), 1e-8)
    np.testing.assert_allclose(out["table"], tables[-1], rtol=1e-12)
    np.testing.assert_allclose(out["bias"], biases[-1], rtol=1e-12)


@case("ex11_task2")
def test_zero_grad_and_a_model_with_a_tied_table(optimizer):
    minishare.manual_seed(1)
    model = AlbertForPreTraining(AlbertConfig(vocab_size=20, embedding_size=4, hidden_size=8,
                                              num_hidden_layers=3, num_attention_heads=2,
                                              intermediate_size=8, max_position_embeddings=8))
    naive = [p for _, p in model.named_parameters(remove_duplicate=False)]
    model(np.array([[1, 2, 3]]), labels=np.array([[1, -100, 3]])).loss.backward()
    adam = optimizer.Adam(naive, lr=0.01)
    adam.step()
    states, with_grad = len(adam.state), sum(p.grad is not None for p in model.parameters())
    adam.zero_grad()
    return {"listed": len(naive), "distinct": len(list(model.parameters())), "states": states,
            "with grad": with_grad, "all None": all(p.grad is None for p in model.parameters())}


@test_zero_grad_and_a_model_with_a_tied_table.judge
def _(out, ref):
    assert out["listed"] > out["distinct"], out
    assert out["states"] == out["with grad"], out
    assert out["all None"], "zero_grad must set every grad to None"


@case("ex11_task3")
def test_clipping_scales_every_distinct_gradient_once(optimizer):
    layer, naive = shared_stack()
    layer.weight.grad = np.array([[6.0, 0.0], [0.0, 0.0]])
    layer.bias.grad = np.array([0.0, 8.0])
    norm = optimizer.clip_grad_norm_(naive, max_norm=1.0)
    return {"norm": norm, "weight grad": layer.weight.grad, "bias grad": layer.bias.grad}


@test_clipping_scales_every_distinct_gradient_once.judge
def _(out, ref):
    assert isinstance(out["norm"], float) and math.isclose(out["norm"], 10.0, rel_tol=1e-12), out["norm"]
    np.testing.assert_allclose(out["weight grad"], [[0.6, 0.0], [0.0, 0.0]], rtol=1e-12)
    np.testing.assert_allclose(out["bias grad"], [0.0, 0.8], rtol=1e-12)


@case("ex11_task3")
def test_clipping_a_tied_table_with_a_tensor_without_grad(optimizer, given):
    """The tied table listed twice, a bias without a gradient, a random gradient: the norm of
    the distinct gradients, and the table's gradient scaled once."""
    model = Tied()
    naive = [p for _, p in model.named_parameters(remove_duplicate=False)]
    model.embedding.weight.grad = given["g"].copy()
    model.output.bias.grad = None
    norm = optimizer.clip_grad_norm_(naive, max_norm=0.5)
    return {"norm": norm, "grad": model.embedding.weight.grad, "bias grad is None": model.output.bias.grad is None}


@test_clipping_a_tied_table_with_a_tensor_without_grad.given
def _(rng):
    return {"g": rng.standard_normal((5, 3))}


@test_clipping_a_tied_table_with_a_tensor_without_grad.judge
def _(out, ref, given):
    g = given["g"]
    total = float(np.sqrt((g ** 2).sum()))
    assert isinstance(out["norm"], float) and math.isclose(out["norm"], total, rel_tol=1e-12), (out["norm"], total)
    np.testing.assert_allclose(out["grad"], g * (0.5 / total), rtol=1e-12)
    assert out["bias grad is None"]
### END HIDDEN TESTS
