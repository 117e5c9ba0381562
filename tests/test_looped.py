"""Looped depth (chapter 14): the plan of a run-time depth, the looped stack's gradients (full and
truncated) against finite differences, its counts against hand computation and against the
products a forward pass runs, its activation memory against the formula, and the pointer forests
against their definition."""
import numpy as np
import pytest

import minishare
from minishare import backend, sharing
from minishare.analysis import looped as costs
from minishare.data import PointerForest, follow_to_root
from minishare.errors import InvalidType, InvalidValue
from minishare.gradcheck import gradcheck
from minishare.models import LoopedConfig, LoopedForTokenClassification
from minishare.nn.looped import LoopedStack, sample_iterations
from minishare.ops import matmul
from minishare.tasks import PointerForestTask
from minishare.tensor import no_grad

from conftest import grad_of


# ---- the plan ---------------------------------------------------------------------------------
def test_looped_schedule_by_hand():
    assert sharing.looped(1, 1, 1, 4) == [0, 1, 1, 1, 1, 2]               # A B B B B C
    assert sharing.looped(2, 2, 0, 3) == [0, 1, 2, 3, 2, 3, 2, 3]
    assert sharing.looped(0, 1, 0, 1) == [0]
    plan = sharing.looped_plan(1, 2, 1, 3)
    assert str(plan) == "A B C B C B C D" and plan.n_layers == 8 and plan.n_sets("ffn") == 4
    assert plan.positions_of("attention", 1) == [1, 3, 5]    # where set B's gradient comes from


@pytest.mark.parametrize("args, error", [((1, 0, 0, 2), InvalidValue), ((1, 1, 0, 0), InvalidValue),
                                         ((-1, 1, 0, 2), InvalidValue), ((1, 1, 0, 2.0), InvalidType),
                                         ((0, 1, 0, sharing.MAX_LAYERS + 1), InvalidValue)])
def test_looped_schedule_refuses(args, error):
    with pytest.raises(error):
        sharing.looped(*args)


# ---- gradients --------------------------------------------------------------------------------
def stack64(injection="add", P=1, R=1, C=1, H=8, seed=0):
    minishare.manual_seed(seed)
    stack = LoopedStack(H, 2, 12, n_prelude=P, n_recurrent=R, n_coda=C, injection=injection).double()
    rng = np.random.default_rng(seed)
    for p in stack.parameters():            # off the LayerNorms' 1 and 0, so that every path shows
        p.data = p.data + backend.asarray(0.1 * rng.standard_normal(p.shape))
    return stack


@pytest.mark.parametrize("injection", ["add", "concat"])
def test_full_backprop_gradcheck(injection):
    stack = stack64(injection, P=1, R=1, C=1)
    x = minishare.tensor(np.random.default_rng(1).standard_normal((2, 3, 8)), requires_grad=True)
    checked = [x, stack.recurrent.ffn_sets[0].sublayer.ffn.weight,
               stack.recurrent.attention_sets[0].sublayer.query.weight, stack.prelude.ffn_sets[0].LayerNorm.bias]
    if injection == "concat":
        checked.append(stack.adapter.weight)
    assert gradcheck(lambda *_: stack(x, iterations=3), *checked)


def unrolled(stack, x, r, fixed=None, k=None):
    """The looped stack written out here: s_0 = 0, then r times s <- recurrent(inject(s, e)). With
    ``fixed`` (a constant s_{r−k}), only the last k iterations run, from it."""
    e = stack.prelude(x, {})
    s = minishare.tensor(np.zeros(e.shape)) if fixed is None else minishare.tensor(fixed)
    for _ in range(r if fixed is None else k):
        s = stack.recurrent(stack.inject(s, e), {})
    return stack.coda(s, {})


def grads(stack, fn, v):
    stack.zero_grad()
    fn().backward(minishare.tensor(v))
    return {name: grad_of(p) for name, p in stack.named_parameters()}


@pytest.mark.parametrize("injection", ["add", "concat"])
def test_truncation_at_k_equals_r_is_full_backprop_exactly(injection):
    stack = stack64(injection, P=1, R=2, C=1)
    x = minishare.tensor(np.random.default_rng(2).standard_normal((2, 4, 8)))
    v = np.random.default_rng(3).standard_normal((2, 4, 8))
    full = grads(stack, lambda: unrolled(stack, x, 4), v)
    for k in (4, 9):                                      # k > r backpropagates through all r
        truncated = grads(stack, lambda: stack(x, iterations=4, backprop_iterations=k), v)
        assert all(np.array_equal(full[n], truncated[n]) for n in full)


@pytest.mark.parametrize("injection", ["add", "concat"])
def test_truncated_gradient_holds_the_early_iterations_fixed(injection):
    """With k < r the gradient is that of the loss with s_{r−k} a constant: checked against finite
    differences of the last k iterations run from that constant, where a parameter moves the
    prelude's e and the last k iterations only; and it differs from the full gradient."""
    r, k = 5, 2
    stack = stack64(injection, P=1, R=1, C=1, seed=4)
    x = minishare.tensor(np.random.default_rng(5).standard_normal((1, 3, 8)))
    v = np.random.default_rng(6).standard_normal((1, 3, 8))
    with no_grad():
        e = stack.prelude(x, {})
        s = minishare.tensor(np.zeros(e.shape))
        for _ in range(r - k):
            s = stack.recurrent(stack.inject(s, e), {})
    fixed = s.numpy()
    truncated = grads(stack, lambda: stack(x, iterations=r, backprop_iterations=k), v)
    full = grads(stack, lambda: stack(x, iterations=r), v)
    params = dict(stack.named_parameters())
    h = 1e-6
    rng = np.random.default_rng(7)
    for name in ("recurrent.ffn_sets.0.sublayer.ffn.weight", "recurrent.attention_sets.0.sublayer.value.weight",
                 "prelude.ffn_sets.0.sublayer.ffn_output.bias", "recurrent.final_norm.weight"):
        p = params[name]
        for index in [tuple(int(rng.integers(n)) for n in p.shape) for _ in range(3)]:
            moved = []
            for sign in (1, -1):
                p.data[index] += sign * h
                with no_grad():
                    moved.append(float((unrolled(stack, x, r, fixed=fixed, k=k).numpy() * v).sum()))
                p.data[index] -= sign * h
            numeric = (moved[0] - moved[1]) / (2 * h)
            assert truncated[name][index] == pytest.approx(numeric, rel=1e-5, abs=1e-8), (name, index)
    recurrent = "recurrent.ffn_sets.0.sublayer.ffn.weight"
    assert not np.allclose(truncated[recurrent], full[recurrent], rtol=1e-3)


def test_truncated_iterations_keep_the_same_forward():
    stack = stack64(P=1, R=1, C=0)
    x = minishare.tensor(np.random.default_rng(8).standard_normal((2, 3, 8)))
    out, states = stack(x, iterations=6, backprop_iterations=2, output_hidden_states=True)
    np.testing.assert_array_equal(out.numpy(), unrolled_without_coda(stack, x, 6))
    assert len(states) == 6 and [s.requires_grad for s in states] == [False] * 4 + [True] * 2


def unrolled_without_coda(stack, x, r):
    with no_grad():
        e = stack.prelude(x, {})
        s = minishare.tensor(np.zeros(e.shape))
        for _ in range(r):
            s = stack.recurrent(stack.inject(s, e), {})
    return s.numpy()


# ---- counts ----------------------------------------------------------------------------------
def config(**overrides):
    return LoopedConfig(**{**dict(vocab_size=10, num_fields=2, num_labels=7, hidden_size=8, num_attention_heads=2,
                                  intermediate_size=12, num_prelude_layers=1, num_recurrent_layers=2,
                                  num_coda_layers=1, mean_iterations=3), **overrides})


@pytest.mark.parametrize("injection", ["add", "concat"])
def test_parameters_counted_by_hand_and_independent_of_r(injection):
    # V = 10, F = 2, H = 8, I = 12, L = 7; P = 1, R = 2, C = 1
    layer = (4 * 64 + 4 * 8 + 2 * 8) + (2 * 8 * 12 + 12 + 8 + 2 * 8)   # attention + LN: 304; FFN + LN: 228
    assert layer == 532
    hand = 2 * 10 * 8 + 4 * layer + 3 * 2 * 8 + 8 * 7 + 7             # + 3 final LayerNorms, the head
    if injection == "concat":
        hand += 16 * 8 + 8                                          # the adapter 2H -> H
    counts = {minishare.count_parameters(LoopedForTokenClassification(config(injection=injection, mean_iterations=r)))
              for r in (1, 3, 10)}
    assert counts == {hand}


def test_macs_per_token_by_hand():
    # T = 5: one layer 4·64 + 2·5·8 + 2·8·12 = 528; r = 3 runs 1 + 3·2 + 1 = 8 layers
    got = costs.macs_per_token(config(), iterations=3, seq_len=5)
    assert got == {"prelude": 528, "recurrent": 3168, "coda": 528, "adapter": 0, "classifier": 56, "total": 4280}
    assert costs.macs_per_token(config(injection="concat"), 3, 5)["adapter"] == 3 * 2 * 64
    assert costs.flops_per_token(config(), 3, 5, training=True) == 6 * 4280
    with pytest.raises(InvalidValue):
        costs.macs_per_token(config(), 0, 5)


@pytest.mark.parametrize("injection, r, T", [("add", 1, 4), ("add", 4, 6), ("concat", 3, 5)])
def test_macs_equal_the_products_the_model_runs(monkeypatch, injection, r, T):
    counted = []

    def wrap(cls, macs):
        forward = cls.forward

        def counting(self, a, b, *rest):
            counted.append(macs(a, b))
            return forward(self, a, b, *rest)
        monkeypatch.setattr(cls, "forward", counting)
    wrap(matmul.MatMul, lambda a, b: int(np.prod(np.broadcast_shapes(a.shape[:-2], b.shape[:-2])))
         * a.shape[-2] * a.shape[-1] * b.shape[-1])
    wrap(matmul.Linear, lambda x, w: int(np.prod(x.shape[:-1])) * w.shape[0] * w.shape[1])
    c = config(injection=injection)
    model = LoopedForTokenClassification(c)
    B = 3
    with no_grad():
        model(np.random.default_rng(0).integers(0, 10, (B, T, 2)), iterations=r)
    assert sum(counted) / (B * T) == costs.macs_per_token(c, r, T)["total"]


# ---- memory: k iterations keep activations, not r ---------------------------------------------
def test_activations_follow_k_not_r():
    c = config(num_recurrent_layers=1)
    model = LoopedForTokenClassification(c)
    rng = np.random.default_rng(9)
    batch = {"input_ids": rng.integers(0, 10, (4, 6, 2)), "labels": rng.integers(0, 7, (4, 6))}
    fitted = costs.activation_model(model, batch)
    assert fitted["per_iteration"] > 0 and fitted["outside"] > 0
    for r, k in [(1, 1), (6, 1), (6, 3), (9, 3), (5, 5), (12, 4)]:
        assert costs.measured_activations(model, batch, r, k) == costs.activations(fitted, r, k), (r, k)
    # untruncated, memory grows with r: 8 iterations keep 8 times one iteration's share
    assert costs.measured_activations(model, batch, 8, None) == fitted["outside"] + 8 * fitted["per_iteration"]


# ---- the model -------------------------------------------------------------------------------
def test_training_mode_truncates_and_evaluation_does_not_keep_a_graph():
    model = LoopedForTokenClassification(config(mean_iterations=4, backprop_iterations=1))
    rng = np.random.default_rng(10)
    batch = {"input_ids": rng.integers(0, 10, (2, 5, 2)), "labels": rng.integers(0, 7, (2, 5))}
    trained = costs.measured_activations(model, batch, 4, None)      # train mode: the config's k = 1
    assert trained == costs.measured_activations(model, batch, 4, 1) < costs.measured_activations(model, batch, 4, 4)
    model.eval()
    by_iteration = model.logits_by_iteration(batch["input_ids"], 4)
    assert len(by_iteration) == 4 and not any(l.requires_grad for l in by_iteration)
    np.testing.assert_allclose(by_iteration[-1].numpy(), model(batch["input_ids"], iterations=4).logits.numpy(),
                               rtol=1e-6, atol=1e-7)


def test_model_refuses_bad_ids_and_configs():
    model = LoopedForTokenClassification(config())
    with pytest.raises(InvalidValue, match="shape"):
        model(np.zeros((2, 5), dtype=np.int64))
    with pytest.raises(InvalidValue, match="vocab_size"):
        model(np.full((1, 2, 2), 10))
    with pytest.raises(InvalidValue, match="injection"):
        config(injection="gate")
    with pytest.raises(InvalidValue, match="backprop_iterations"):
        config(backprop_iterations=0)


# ---- the pointer forests ------------------------------------------------------------------
def test_forest_labels_are_the_roots_found_by_following():
    forest = PointerForest(n_symbols=20, n_chains=4)
    rng = np.random.default_rng(11)
    for depth in (1, 2, 4):
        ids, labels, depths = forest.sample(rng, depth)
        assert ids.shape == (4 * (depth + 1), 2) and len(set(ids[:, 0])) == len(ids)
        np.testing.assert_array_equal(labels, follow_to_root(ids))
        assert sorted(np.bincount(depths)) == [4] * (depth + 1)
        for (letter, pointer), d in zip(ids, depths):      # depth d: d pointers to a root
            node, steps = letter, 0
            pointer_of = dict(map(tuple, ids))
            while pointer_of[node] != node:
                node, steps = pointer_of[node], steps + 1
            assert steps == d


def test_forest_hand_example_and_limits():
    forest = PointerForest(n_symbols=8, n_chains=2)
    assert forest.max_depth == 3
    np.testing.assert_array_equal(follow_to_root(np.array([[4, 5], [2, 2], [0, 1], [5, 5], [1, 2], [3, 4]])),
                                  [5, 2, 2, 5, 2, 5])
    with pytest.raises(InvalidValue):
        forest.sample(np.random.default_rng(0), 4)
    with pytest.raises(InvalidValue):
        PointerForest(n_symbols=3, n_chains=2)
    assert forest.no_lookup_accuracy(1) == 1.0 and forest.no_lookup_accuracy(3) == 0.5


def test_sampled_iterations_have_the_mean_asked_for():
    rng = np.random.default_rng(12)
    draws = np.array([sample_iterations(rng, 6) for _ in range(20_000)])
    assert draws.min() >= 1 and abs(draws.mean() - 6) < 0.1
    with pytest.raises(InvalidValue):
        sample_iterations(rng, 1)


def test_task_batches_are_a_function_of_the_index():
    forest = PointerForest(16, 2)
    task = PointerForestTask(forest, (1, 2, 3), batch_size=4, seed=3, mean_iterations=5)
    a, b = task.batch(7), task.batch(7)
    assert a["iterations"] == b["iterations"] and np.array_equal(a["input_ids"], b["input_ids"])
    assert "iterations" not in PointerForestTask(forest, (1,), batch_size=2).batch(0)    # a fixed-depth model
