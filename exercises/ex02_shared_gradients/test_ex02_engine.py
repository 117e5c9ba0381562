"""Cases of exercise 2: hand-worked graphs, central differences of NumPy functions written here,
and the sum of the gradients of untied copies of a shared weight. Random values are drawn by
each case's ``given`` function, on the grader's side; a graph whose values do not matter (the
order of its tensors) keeps fixed ones.

Each probe calls ``engine`` (the student's module) and returns what the walk produced (positions
in the order, gradients); its judge, run by the grader, checks them. ``Tensor.backward`` and the
library's own walk may not be used by the submission (points.json forbids them; the grader's
tripwires catch a call however it is reached)."""
import numpy as np

import minishare
from minishare.grader.cases import case, raises, same


def array(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def leaf(*shape, seed=0):
    return minishare.tensor(array(*shape, seed=seed), requires_grad=True)


def param(a):
    """Probe helper: a leaf that requires grad, holding ``a`` (drawn by a ``given`` function)."""
    return minishare.tensor(a, requires_grad=True)


def numeric_gradient(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        g[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return g


def scalar(out):
    """Judge helper: a 0-d gradient arrives as a number or a 0-d array; either is fine."""
    return np.array(float(out)) if isinstance(out, (int, float)) and not isinstance(out, bool) else out


def summary(order, root, named):
    """Probe helper: an order as data. For each listed tensor, the positions of its inputs that
    require grad (-1: not listed); where each named tensor is listed; whether root is last."""
    position = {id(t): i for i, t in enumerate(order)}
    return {"length": len(order), "distinct": len(position),
            "inputs": [[position.get(id(p), -1) for p in (t._ctx.inputs if t._ctx is not None else ())
                        if p.requires_grad] for t in order],
            "named": {name: [i for i, t in enumerate(order) if t is x] for name, x in named.items()},
            "root_last": bool(order) and order[-1] is root}


def check_order(out, length, listed, left_out=()):
    """Judge helper: ``length`` distinct tensors, each after its listed inputs, root last, the
    tensors named in ``listed`` once each and those in ``left_out`` not at all."""
    assert out["length"] == length, f"{out['length']} tensors listed, expected {length}"
    assert out["distinct"] == length, f"{length - out['distinct']} tensors listed more than once"
    for i, inputs in enumerate(out["inputs"]):
        assert all(p < i for p in inputs), f"tensor {i} of the order comes before one of its inputs ({inputs})"
    assert out["root_last"], "root is not the last tensor of the order"
    for name in listed:
        assert len(out["named"][name]) == 1, f"{name} listed {len(out['named'][name])} times, expected once"
    for name in left_out:
        assert out["named"][name] == [], f"{name} is listed, but it is not on a path from the inputs to root"


# --------------------------------------------------------------------------- task 1
@case("ex02_task1")
def test_topological_order_puts_inputs_first(engine):
    """a, b -> c = a b -> d = c + a -> e = d c: five tensors, every one on a path from a or b."""
    a, b = leaf(2, seed=1), leaf(2, seed=2)
    c = a * b
    d = c + a
    e = d * c
    return summary(engine.topological_order(e, [a, b]), e, {"a": a, "b": b})


@test_topological_order_puts_inputs_first.judge
def _(out, ref):
    check_order(out, 5, listed=("a", "b"))


@case("ex02_task1")
def test_topological_order_keeps_only_the_paths_from_the_inputs(engine):
    """The same graph with inputs [b]: a is not on a path from b (c = a b is), so 4 tensors."""
    a, b = leaf(2, seed=1), leaf(2, seed=2)
    c = a * b
    e = (c + a) * c
    return summary(engine.topological_order(e, [b]), e, {"a": a, "b": b})


@test_topological_order_keeps_only_the_paths_from_the_inputs.judge
def _(out, ref):
    check_order(out, 4, listed=("b",), left_out=("a",))


@case("ex02_task1")
def test_topological_order_of_a_deep_chain_is_iterative(engine):
    """10,000 ops in a chain: a recursive walk passes Python's recursion limit (1,000)."""
    x = leaf(1)
    y = x
    for _ in range(10_000):
        y = y * 1.0
    return summary(engine.topological_order(y, [x]), y, {"x": x})


@test_topological_order_of_a_deep_chain_is_iterative.judge
def _(out, ref):
    check_order(out, 10_001, listed=("x",))
    assert out["named"]["x"] == [0], "x is not first"


# --------------------------------------------------------------------------- task 2
@case("ex02_task2")
def test_a_scalar_used_twice_gets_both_gradients(engine):
    """f(w) = w · w · 3 at w = 2: df/dw = 6w = 12, the sum of the two uses' 6 + 6."""
    w = minishare.tensor(np.array(2.0), requires_grad=True)
    engine.backward(w * w * 3.0, np.array(1.0), [w])
    return w.grad


@test_a_scalar_used_twice_gets_both_gradients.judge
def _(out, ref):
    same(scalar(out), np.array(12.0), rtol=1e-12)


@case("ex02_task2")
def test_a_weight_used_three_times_gets_all_three_gradients(engine):
    """Σ w ⊙ (5, 6) + Σ w ⊙ (1, 2) + Σ w ⊙ (1, 2): dL/dw = (7, 10), the sum of all three uses."""
    w = param(np.ones(2))
    uses = [(w * minishare.tensor(np.array(c))).sum() for c in ([5.0, 6.0], [1.0, 2.0], [1.0, 2.0])]
    engine.backward(uses[0] + uses[1] + uses[2], np.array(1.0), [w])
    return w.grad


@test_a_weight_used_three_times_gets_all_three_gradients.judge
def _(out, ref):
    same(out, np.array([7.0, 10.0]), rtol=1e-12)


@case("ex02_task2")
def test_weight_used_by_two_layers_matches_finite_differences(engine, given):
    W = param(given["W"])
    engine.backward(W @ (W @ minishare.tensor(given["x"])).tanh(), given["v"], [W])
    return W.grad


@test_weight_used_by_two_layers_matches_finite_differences.given
def _(rng):
    return {"W": rng.standard_normal((3, 3)), "x": rng.standard_normal((3, 2)), "v": rng.standard_normal((3, 2))}


@test_weight_used_by_two_layers_matches_finite_differences.judge
def _(out, ref, given):
    x, v = given["x"], given["v"]
    same(out, numeric_gradient(lambda w: float((v * (w @ np.tanh(w @ x))).sum()), given["W"]), rtol=1e-6, atol=1e-8)


@case("ex02_task2")
def test_only_the_inputs_get_a_gradient(engine, given):
    """y = Σ a ⊙ b with inputs [a]: a.grad = b, and b.grad stays None."""
    a, b = param(given["a"]), param(given["b"])
    engine.backward((a * b).sum(), np.array(1.0), [a])
    return {"a": a.grad, "b is None": b.grad is None}


@test_only_the_inputs_get_a_gradient.given
def _(rng):
    return {"a": rng.standard_normal(3), "b": rng.standard_normal(3)}


@test_only_the_inputs_get_a_gradient.judge
def _(out, ref, given):
    same(out["a"], given["b"], rtol=1e-12, where="a.grad")
    assert out["b is None"], "b is not one of inputs, but its .grad was changed"


# --------------------------------------------------------------------------- task 3
class Batch(tuple):
    """(X, y) of a micro-batch; its length is its number of examples."""
    def __len__(self):
        return len(self[0])


def linear_model(rng, sizes):
    """Given helper: examples X, y of a linear model with weights w, in micro-batches of ``sizes``."""
    n = sum(sizes)
    return {"X": rng.standard_normal((n, 3)), "y": rng.standard_normal(n), "w": rng.standard_normal(3),
            "sizes": sizes}


def linear_model_gradient(engine, model):
    """Probe helper: mean squared error of the linear model of ``linear_model``, accumulated over
    its micro-batches."""
    X, y, sizes = model["X"], model["y"], model["sizes"]
    w = param(model["w"])

    def loss(batch):
        xb, yb = batch
        r = minishare.tensor(xb) @ w.reshape(3, 1) - minishare.tensor(yb.reshape(-1, 1))
        return (r * r).mean()

    bounds = np.cumsum([0] + sizes)
    batches = [Batch((X[i:j], y[i:j])) for i, j in zip(bounds[:-1], bounds[1:])]
    (grad,) = engine.accumulated_gradients(loss, [w], batches)
    return grad


def full_batch_gradient(model):
    """Judge helper: the gradient of the mean over all examples, by central differences."""
    X, y = model["X"], model["y"]
    return numeric_gradient(lambda v: float(((X @ v - y) ** 2).mean()), model["w"])


@case("ex02_task3")
def test_accumulated_gradient_equals_the_full_batch_gradient(engine, given):
    """Uneven micro-batches (3 + 1 examples) must give the gradient of the mean over all 4."""
    return linear_model_gradient(engine, given)


@test_accumulated_gradient_equals_the_full_batch_gradient.given
def _(rng):
    return linear_model(rng, [3, 1])


@test_accumulated_gradient_equals_the_full_batch_gradient.judge
def _(out, ref, given):
    same(out, full_batch_gradient(given), rtol=1e-6)


### BEGIN HIDDEN TESTS
from minishare.tensor import Function     # noqa: E402  (hidden-only helper below)

BACKWARD_CALLS = {}


class Counted(Function):
    """The identity, counting how often its backward runs (under ``tag``)."""

    def forward(self, x, tag):
        self.tag = tag
        return x.copy()

    def backward(self, grad):
        BACKWARD_CALLS[self.tag] = BACKWARD_CALLS.get(self.tag, 0) + 1
        return (grad,)


def doubling(levels):
    """x -> y = x·x -> y·y -> ...: each level uses the one below twice, so a walk that does not
    remember what it has visited takes 2^levels steps. At x = 1, dy/dx = 2^levels."""
    x = minishare.tensor(np.array(1.0), requires_grad=True)
    y = x
    for _ in range(levels):
        y = y * y
    return x, y


@case("ex02_task1")
def test_topological_order_lists_a_shared_leaf_once(engine):
    w = leaf(2, seed=7)
    y = (w * w) + (w * 2.0)
    return summary(engine.topological_order(y, [w]), y, {"w": w})


@test_topological_order_lists_a_shared_leaf_once.judge
def _(out, ref):
    check_order(out, 4, listed=("w",))


@case("ex02_task1", timeout=5)
def test_topological_order_visits_a_shared_node_once(engine):
    """40 levels, each used twice by the next: 41 tensors, found in linear time."""
    x, y = doubling(40)
    return summary(engine.topological_order(y, [x]), y, {"x": x})


@test_topological_order_visits_a_shared_node_once.judge
def _(out, ref):
    check_order(out, 41, listed=("x",))


@case("ex02_task1")
def test_topological_order_leaves_out_a_branch_and_constants(engine):
    """root = Σ a ⊙ b + Σ c ⊙ c + Σ a ⊙ k, inputs [a], k a constant: c's branch, b and k are off
    the paths from a; a, a ⊙ b, its sum, a ⊙ k, its sum and the two additions remain."""
    a, b, c = leaf(2, seed=8), leaf(2, seed=9), leaf(2, seed=10)
    k = minishare.tensor(array(2, seed=11))
    root = (a * b).sum() + (c * c).sum() + (a * k).sum()
    return summary(engine.topological_order(root, [a]), root, {"a": a, "b": b, "c": c, "k": k})


@test_topological_order_leaves_out_a_branch_and_constants.judge
def _(out, ref):
    check_order(out, 7, listed=("a",), left_out=("b", "c", "k"))


@case("ex02_task1")
def test_topological_order_is_empty_when_root_ignores_the_inputs(engine):
    a, b = leaf(2, seed=12), leaf(2, seed=13)
    return len(engine.topological_order((b * b).sum(), [a]))


@test_topological_order_is_empty_when_root_ignores_the_inputs.judge
def _(out, ref):
    assert out == 0, f"root does not depend on a, but {out} tensors are listed"


@case("ex02_task2")
def test_shared_gradient_is_the_sum_of_untied_copies(engine, given):
    """Untie W into two leaves with the same values: their gradients add up to the shared one."""
    x, v = minishare.tensor(given["x"]), given["v"]
    W = param(given["W"])
    engine.backward(W @ (W @ x).relu(), v, [W])
    W1, W2 = param(given["W"]), param(given["W"])
    engine.backward(W2 @ (W1 @ x).relu(), v, [W1, W2])
    return {"shared": W.grad, "untied": [W1.grad, W2.grad]}


@test_shared_gradient_is_the_sum_of_untied_copies.given
def _(rng):
    return {"W": rng.standard_normal((4, 4)), "x": rng.standard_normal((4, 3)), "v": rng.standard_normal((4, 3))}


@test_shared_gradient_is_the_sum_of_untied_copies.judge
def _(out, ref, given):
    assert out["untied"][0] is not None and out["untied"][1] is not None, "an untied copy got no gradient"
    same(out["shared"], out["untied"][0] + out["untied"][1], rtol=1e-12)
    x, v = given["x"], given["v"]
    same(out["shared"], numeric_gradient(lambda w: float((v * (w @ np.maximum(w @ x, 0))).sum()), given["W"]),
         rtol=1e-6, atol=1e-8)


@case("ex02_task2")
def test_backward_adds_to_an_existing_grad(engine):
    w = minishare.tensor(np.array([1.0, 2.0]), requires_grad=True)
    w.grad = np.array([10.0, 10.0])
    engine.backward(w * 3.0, np.array([1.0, 1.0]), [w])
    return w.grad


@test_backward_adds_to_an_existing_grad.judge
def _(out, ref):
    same(out, np.array([13.0, 13.0]))


@case("ex02_task2")
def test_backward_refuses_an_input_that_is_not_a_gradient_leaf(engine):
    """An intermediate result, or a leaf without requires_grad, can get no .grad here."""
    a = leaf(2, seed=14)
    h = a * 2.0
    root = (h * h).sum()
    return {"intermediate": raises(ValueError, engine.backward, root, np.array(1.0), [h]),
            "constant": raises(ValueError, engine.backward, root, np.array(1.0),
                               [a, minishare.tensor(np.ones(2))])}


@case("ex02_task2")
def test_each_op_on_the_path_runs_its_backward_once_and_no_other(engine, given):
    """p = Counted(a) is used twice; Counted(c) is off the path from a: it must not run."""
    BACKWARD_CALLS.clear()
    a, c = param(given["a"]), param(given["c"])
    p = Counted.apply(a, tag="on the path")
    root = (p * p).sum() + (Counted.apply(c, tag="off the path") * c).sum()
    engine.backward(root, np.array(1.0), [a])
    return {"calls": dict(BACKWARD_CALLS), "a": a.grad, "c is None": c.grad is None}


@test_each_op_on_the_path_runs_its_backward_once_and_no_other.given
def _(rng):
    return {"a": rng.standard_normal(3), "c": rng.standard_normal(3)}


@test_each_op_on_the_path_runs_its_backward_once_and_no_other.judge
def _(out, ref, given):
    assert out["calls"].get("on the path", 0) == 1, f"the op on the path ran backward {out['calls'].get('on the path', 0)} times"
    assert out["calls"].get("off the path", 0) == 0, "an op off the path from the inputs ran backward"
    same(out["a"], 2 * given["a"], rtol=1e-12, where="a.grad")
    assert out["c is None"], "c is not one of inputs, but its .grad was changed"


@case("ex02_task2", timeout=5)
def test_backward_through_a_node_used_twice_at_every_level(engine):
    """40 levels, each used twice: one pass in linear time gives 2^40; one push per path takes
    2^40 steps."""
    x, y = doubling(40)
    engine.backward(y, np.array(1.0), [x])
    return x.grad


@test_backward_through_a_node_used_twice_at_every_level.judge
def _(out, ref):
    same(scalar(out), np.array(2.0 ** 40), rtol=1e-12)


@case("ex02_task2")
def test_backward_through_a_deep_chain(engine):
    """10,000 ops in a chain, y = x · 1.0001^10000."""
    x = minishare.tensor(np.array([1.0]), requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    engine.backward(y, np.array([1.0]), [x])
    return x.grad


@test_backward_through_a_deep_chain.judge
def _(out, ref):
    same(out, np.array([1.0001 ** 10_000]), rtol=1e-9)


@case("ex02_task3")
def test_accumulation_starts_from_a_clean_gradient(engine):
    w = minishare.tensor(np.array([1.0]), requires_grad=True)
    w.grad = np.array([100.0])

    class Examples(list):
        pass

    (grad,) = engine.accumulated_gradients(lambda b: (w * float(sum(b))).sum(), [w],
                                           [Examples([1.0, 1.0]), Examples([4.0])])
    return grad


@test_accumulation_starts_from_a_clean_gradient.judge
def _(out, ref):
    same(out, np.array([2.0 / 3 * 2.0 + 1.0 / 3 * 4.0]))


@case("ex02_task3")
def test_accumulation_over_three_uneven_micro_batches(engine, given):
    return linear_model_gradient(engine, given)


@test_accumulation_over_three_uneven_micro_batches.given
def _(rng):
    return linear_model(rng, [1, 4, 2])


@test_accumulation_over_three_uneven_micro_batches.judge
def _(out, ref, given):
    same(out, full_batch_gradient(given), rtol=1e-6)
### END HIDDEN TESTS
