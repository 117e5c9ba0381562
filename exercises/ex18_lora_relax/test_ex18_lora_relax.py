"""Cases of exercise 18: the relaxed layer against NumPy's x (W + B A)ᵀ + b and central
differences of it (the grader computes those), with the memory its forward pass holds, the SVD
initialization against the properties that define it (exact at full rank, Eckart–Young's error,
the paper's B = U_r Σ_r), and the counts against hand computation. The grader draws the random
inputs (``given``). The NumPy layer and the SVD of the residual are tasks 1 and 2's answers, so
they sit with the hidden cases, which the release leaves out: a visible case compares with
hand-worked values or with the reference solution (``ref``)."""
import tracemalloc

import numpy as np

import minishare
from minishare.grader.cases import case, same


def leaf(a):
    return minishare.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


def layer_inputs(rng, lead, n_in, n_out, r):
    """The grader's draw: x, W, A, B, b of a layer and a cotangent v for its output."""
    shapes = ((*lead, n_in), (n_out, n_in), (r, n_in), (n_out, r), (n_out,))
    return {"arrays": [rng.standard_normal(shape) for shape in shapes], "v": rng.standard_normal((*lead, n_out))}


def forward_and_gradients(lora, given):
    """Probe helper: y and the five gradients for the cotangent v."""
    leaves = [leaf(a) for a in given["arrays"]]
    y = lora.LoRALinear.apply(*leaves)
    y.backward(given["v"])
    return {"y": y.numpy(), "grads": [None if t.grad is None else np.asarray(t.grad) for t in leaves]}


def numeric_gradient(phi, a, eps=1e-6):
    g = np.zeros_like(a)
    for i in np.ndindex(*a.shape):
        up, down = a.copy(), a.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (phi(up) - phi(down)) / (2 * eps)
    return g


def same_as_reference(out, ref):
    """Judge helper of the visible cases: y and the five gradients equal the reference solution's
    on the same inputs (an exact backward; rounding differs only in the last digits)."""
    same(out["y"], ref["y"], rtol=1e-10, atol=1e-12, where="y")
    for name, got, want in zip(["x", "W", "A", "B", "b"], out["grads"], ref["grads"]):
        same(got, want, rtol=1e-9, atol=1e-12, where=f"the gradient of {name}")


# --------------------------------------------------------------------------- task 1
@case("ex18_task1")
def test_hand_worked_rank_one(lora):
    """W = I (2 × 2), A = (1, 0), B = (0, 1)ᵀ: W + B A = [[1, 0], [1, 1]], so x = (1, 2) gives
    y = (1, 3) + b = (1, 3) + (0, 10)."""
    x, W, A, B, b = (np.array(a, dtype=np.float64) for a in
                     ([[1.0, 2.0]], np.eye(2), [[1.0, 0.0]], [[0.0], [1.0]], [0.0, 10.0]))
    return lora.LoRALinear.apply(*(leaf(a) for a in (x, W, A, B, b))).numpy()


@test_hand_worked_rank_one.judge
def _(out, ref):
    same(out, np.array([[1.0, 13.0]]), rtol=1e-12)


@case("ex18_task1")
def test_forward_and_backward_on_random_inputs(lora, given):
    return forward_and_gradients(lora, given)


@test_forward_and_backward_on_random_inputs.given
def _(rng):
    return layer_inputs(rng, (4,), 5, 3, 2)


@test_forward_and_backward_on_random_inputs.judge
def _(out, ref):
    same_as_reference(out, ref)


def wide_layer():
    """x, W, A, B, b of a 96 -> 128 layer of rank 2 on 2 rows: W is 98,304 bytes, the rest a few."""
    rng = np.random.default_rng(18)
    return [rng.standard_normal(shape) for shape in ((2, 96), (128, 96), (2, 96), (128, 2), (128,))]


@case("ex18_task1")
def test_forward_never_forms_an_out_by_in_matrix(lora):
    """The forward pass of a wide layer: y, and the most memory it held at once (tracemalloc counts
    NumPy's arrays). x Wᵀ and (x Aᵀ) Bᵀ need a few rows of numbers; W + B A, or B A, is a
    128 × 96 matrix as large as W."""
    leaves = [leaf(a) for a in wide_layer()]
    tracemalloc.start()
    try:
        y = lora.LoRALinear.apply(*leaves)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return {"y": y.numpy(), "peak bytes": peak}


@test_forward_never_forms_an_out_by_in_matrix.judge
def _(out, ref):
    arrays = wide_layer()
    same(out["y"], ref["y"], rtol=1e-10, atol=1e-12, where="y")
    limit = arrays[1].nbytes // 2
    assert out["peak bytes"] < limit, \
        f"the forward pass held {out['peak bytes']:,} bytes at once, more than half of W's {arrays[1].nbytes:,}: " \
        "it formed an (out, in) matrix such as W + B A; compute x Wᵀ + (x Aᵀ) Bᵀ instead"


# --------------------------------------------------------------------------- task 2
def weights(rng, *shape):
    """The grader's draw: a trained weight and the shared one that replaces it."""
    return {"original": rng.standard_normal(shape), "shared": rng.standard_normal(shape)}


@case("ex18_task2")
def test_svd_init_every_rank(lora, given):
    return {str(r): list(lora.svd_init(given["original"], given["shared"], r)) for r in range(5)}


@test_svd_init_every_rank.given
def _(rng):
    return weights(rng, 4, 6)


@test_svd_init_every_rank.judge
def _(out, ref, given):
    for r, (B, A) in out.items():
        ref_B, ref_A = ref[r]
        # each column of B and row of A is the reference's up to a sign: compare B A and B's norms
        same(B @ A, ref_B @ ref_A, rtol=1e-9, atol=1e-10, where=f"B A at rank {r}")
        same(A @ A.T, np.eye(int(r)), rtol=1e-9, atol=1e-10, where=f"A Aᵀ at rank {r} (A = V_rᵀ has orthonormal rows)")
        same(np.linalg.norm(B, axis=0), np.linalg.norm(ref_B, axis=0), rtol=1e-9, atol=1e-10,
             where=f"the column norms of B at rank {r} (B = U_r Σ_r: the singular values)")
    B, A = out["4"]
    same(given["shared"] + B @ A, given["original"], rtol=1e-9, atol=1e-10,
         where="shared + B A at full rank (the trained layer itself)")


# --------------------------------------------------------------------------- task 3
ATTENTION_FFN = [(8, 8, True)] * 4 + [(8, 32, True), (32, 8, True)]   # H = 8, FFN 32


@case("ex18_task3")
def test_counts_of_cycle(lora):
    return [lora.relaxed_count(ATTENTION_FFN, [0, 1, 0, 1], r) for r in (0, 1, 4)]


@test_counts_of_cycle.judge
def _(out, ref):
    per_set = 4 * (64 + 8) + (256 + 32) + (256 + 8)
    per_rank = 4 * 16 + 40 + 40                          # r (in + out) per Linear, per position
    assert out == [2 * per_set, 2 * per_set + 4 * per_rank, 2 * per_set + 16 * per_rank], out


@case("ex18_task3")
def test_break_even_of_universal(lora):
    """One set for 4 positions, one 10 × 10 Linear without bias: 100 stored, 400 not shared; each
    rank adds 4 · 20, so rank 3 stores 340 < 400 and rank 4 stores 420."""
    return lora.break_even_rank([(10, 10, False)], [0, 0, 0, 0])


@test_break_even_of_universal.judge
def _(out, ref):
    assert out == 3, out


### BEGIN HIDDEN TESTS
# The layer in NumPy and the SVD of the residual, for the hidden judges: tasks 1 and 2's answers,
# so the release must not ship them.
def np_lora(x, W, A, B, b):
    """The layer in NumPy, with B A formed (fine for a check)."""
    return x @ (W + B @ A).T + b


def judge_layer(out, given):
    """y against NumPy, each gradient against central differences of Σ v ⊙ y."""
    arrays = given["arrays"]
    same(out["y"], np_lora(*arrays), rtol=1e-10, atol=1e-12, where="y")
    names = ["x", "W", "A", "B", "b"]
    for k, a in enumerate(arrays):
        def phi(moved, k=k):
            args = list(arrays)
            args[k] = moved
            return float((given["v"] * np_lora(*args)).sum())
        assert out["grads"][k] is not None, f"no gradient for {names[k]}"
        same(out["grads"][k], numeric_gradient(phi, a), rtol=1e-6, atol=1e-8, where=f"the gradient of {names[k]}")


def judge_svd(out, original, shared):
    residual = original - shared
    S = np.linalg.svd(residual, compute_uv=False)
    for r, (B, A) in out.items():
        r = int(r)
        assert B.shape == (original.shape[0], r) and A.shape == (r, original.shape[1]), (r, B.shape, A.shape)
        same(np.linalg.norm(residual - B @ A), np.sqrt((S[r:] ** 2).sum()), rtol=1e-9, atol=1e-10,
             where=f"the error ‖residual - B A‖ at rank {r} (Eckart–Young: the dropped singular values)")
        same(A @ A.T, np.eye(r), rtol=1e-9, atol=1e-10, where=f"A Aᵀ at rank {r} (A = V_rᵀ has orthonormal rows)")
        same(np.linalg.norm(B, axis=0), S[:r], rtol=1e-9, atol=1e-10,
             where=f"the column norms of B at rank {r} (B = U_r Σ_r: the singular values)")


@case("ex18_task1")
def test_three_dimensional_input_and_a_wide_layer(lora, given):
    """x (2, 3, 4) -> (2, 3, 7) with rank 3: the leading axes fold into rows, the bias's gradient
    sums over all of them, nothing assumes a square W."""
    return forward_and_gradients(lora, given)


@test_three_dimensional_input_and_a_wide_layer.given
def _(rng):
    return layer_inputs(rng, (2, 3), 4, 7, 3)


@test_three_dimensional_input_and_a_wide_layer.judge
def _(out, ref, given):
    judge_layer(out, given)


@case("ex18_task1")
def test_rank_zero_is_the_linear_layer(lora, given):
    return forward_and_gradients(lora, given)


@test_rank_zero_is_the_linear_layer.given
def _(rng):
    return layer_inputs(rng, (3,), 5, 2, 0)


@test_rank_zero_is_the_linear_layer.judge
def _(out, ref, given):
    judge_layer(out, given)


@case("ex18_task1")
def test_a_tall_layer_of_full_rank(lora, given):
    return forward_and_gradients(lora, given)


@test_a_tall_layer_of_full_rank.given
def _(rng):
    return layer_inputs(rng, (2, 1, 2), 3, 6, 3)


@test_a_tall_layer_of_full_rank.judge
def _(out, ref, given):
    judge_layer(out, given)


@case("ex18_task2")
def test_svd_init_of_a_tall_layer(lora, given):
    return {str(r): list(lora.svd_init(given["original"], given["shared"], r)) for r in range(4)}


@test_svd_init_of_a_tall_layer.given
def _(rng):
    return weights(rng, 7, 3)


@test_svd_init_of_a_tall_layer.judge
def _(out, ref, given):
    judge_svd(out, given["original"], given["shared"])


@case("ex18_task2")
def test_svd_init_of_a_shared_layer_that_is_the_original(lora, given):
    """No residual: B A = 0 at every rank."""
    B, A = lora.svd_init(given["original"], given["original"].copy(), 2)
    return B @ A


@test_svd_init_of_a_shared_layer_that_is_the_original.given
def _(rng):
    return weights(rng, 3, 4)


@test_svd_init_of_a_shared_layer_that_is_the_original.judge
def _(out, ref):
    same(out, np.zeros((3, 4)), atol=1e-12)


@case("ex18_task2")
def test_svd_init_refuses_a_rank_too_high(lora):
    refused = []
    for rank in (4, -1):
        try:
            lora.svd_init(np.ones((3, 4)), np.zeros((3, 4)), rank)
            refused.append(False)
        except ValueError:
            refused.append(True)
    return refused


@test_svd_init_refuses_a_rank_too_high.judge
def _(out, ref):
    assert out == [True, True], f"rank 4 of a 3 × 4 layer and rank -1 must raise ValueError: {out}"


@case("ex18_task3")
def test_counts_of_other_plans(lora):
    """Sequence M = 2 of N = 6 ([0, 0, 0, 1, 1, 1]), a sandwich of 5 ([0, 1, 1, 1, 2]) and the
    not-shared stack, with a Linear without a bias among them."""
    linears = [(6, 4, True), (4, 6, False)]
    return [lora.relaxed_count(linears, [0, 0, 0, 1, 1, 1], 2), lora.relaxed_count(linears, [0, 1, 1, 1, 2], 1),
            lora.relaxed_count(linears, [0, 1, 2], 0)]


@test_counts_of_other_plans.judge
def _(out, ref):
    per_set = (24 + 4) + 24
    assert out == [2 * per_set + 6 * 2 * 20, 3 * per_set + 5 * 1 * 20, 3 * per_set], out


@case("ex18_task3")
def test_break_even_of_cycle_of_not_shared_and_at_full_rank(lora):
    """Cycle M = 2 of N = 4 with the attention and FFN of H = 8: 2 sets of 840 saved (1,680); each
    rank costs 4 positions × 144, so rank 2 (+1,152) saves and rank 3 (+1,728) does not. Not
    shared: -1. A 1 -> 100 Linear with a bias, one set for 4 positions: 800 numbers not shared;
    rank 1, its full rank, stores 200 + 4 · 101 = 604, so the search must reach min(in, out)."""
    return [lora.break_even_rank(ATTENTION_FFN, [0, 1, 0, 1]), lora.break_even_rank(ATTENTION_FFN, [0, 1, 2, 3]),
            lora.break_even_rank([(1, 100, True)], [0, 0, 0, 0])]


@test_break_even_of_cycle_of_not_shared_and_at_full_rank.judge
def _(out, ref):
    assert out == [2, -1, 1], out
### END HIDDEN TESTS
