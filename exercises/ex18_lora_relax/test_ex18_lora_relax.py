"""Cases of exercise 18: the relaxed layer against NumPy's x (W + B A)ᵀ + b and central
differences of it (the grader computes those), the SVD initialization against the properties
that define it (exact at full rank, Eckart–Young's error, the paper's B = U_r Σ_r), and the
counts against hand computation."""
import numpy as np

import minishare
from minishare.exercises.cases import case, same


def array(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def leaf(a):
    return minishare.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


def np_lora(x, W, A, B, b):
    """The layer in NumPy, with B A formed (fine for a check)."""
    return x @ (W + B @ A).T + b


def inputs(lead, n_in, n_out, r, seed):
    return [array(*lead, n_in, seed=seed), array(n_out, n_in, seed=seed + 1), array(r, n_in, seed=seed + 2),
            array(n_out, r, seed=seed + 3), array(n_out, seed=seed + 4)]


def forward_and_gradients(lora, arrays, seed):
    """Probe helper: y and the five gradients for a random cotangent."""
    leaves = [leaf(a) for a in arrays]
    y = lora.LoRALinear.apply(*leaves)
    v = array(*y.shape, seed=seed)
    y.backward(v)
    return {"y": y.numpy(), "v": v, "grads": [None if t.grad is None else np.asarray(t.grad) for t in leaves]}


def numeric_gradient(phi, a, eps=1e-6):
    g = np.zeros_like(a)
    for i in np.ndindex(*a.shape):
        up, down = a.copy(), a.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (phi(up) - phi(down)) / (2 * eps)
    return g


def judge_layer(out, arrays):
    """y against NumPy, each gradient against central differences of Σ v ⊙ y."""
    same(out["y"], np_lora(*arrays), rtol=1e-10, atol=1e-12, where="y")
    names = ["x", "W", "A", "B", "b"]
    for k, a in enumerate(arrays):
        def phi(moved, k=k):
            args = list(arrays)
            args[k] = moved
            return float((out["v"] * np_lora(*args)).sum())
        assert out["grads"][k] is not None, f"no gradient for {names[k]}"
        same(out["grads"][k], numeric_gradient(phi, a), rtol=1e-6, atol=1e-8, where=f"the gradient of {names[k]}")


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
def test_forward_and_backward_against_finite_differences(lora):
    return forward_and_gradients(lora, inputs((4,), 5, 3, 2, seed=1), seed=9)


@test_forward_and_backward_against_finite_differences.judge
def _(out, ref):
    judge_layer(out, inputs((4,), 5, 3, 2, seed=1))


# --------------------------------------------------------------------------- task 2
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


@case("ex18_task2")
def test_svd_init_every_rank(lora):
    original, shared = array(4, 6, seed=2), array(4, 6, seed=3)
    return {str(r): list(lora.svd_init(original, shared, r)) for r in range(5)}


@test_svd_init_every_rank.judge
def _(out, ref):
    judge_svd(out, array(4, 6, seed=2), array(4, 6, seed=3))
    B, A = out["4"]
    same(array(4, 6, seed=3) + B @ A, array(4, 6, seed=2), rtol=1e-9, atol=1e-10,
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
@case("ex18_task1")
def test_three_dimensional_input_and_a_wide_layer(lora):
    """x (2, 3, 4) -> (2, 3, 7) with rank 3: the leading axes fold into rows, the bias's gradient
    sums over all of them, nothing assumes a square W."""
    return forward_and_gradients(lora, inputs((2, 3), 4, 7, 3, seed=20), seed=21)


@test_three_dimensional_input_and_a_wide_layer.judge
def _(out, ref):
    judge_layer(out, inputs((2, 3), 4, 7, 3, seed=20))


@case("ex18_task1")
def test_rank_zero_is_the_linear_layer(lora):
    return forward_and_gradients(lora, inputs((3,), 5, 2, 0, seed=30), seed=31)


@test_rank_zero_is_the_linear_layer.judge
def _(out, ref):
    judge_layer(out, inputs((3,), 5, 2, 0, seed=30))


@case("ex18_task1")
def test_a_tall_layer_of_full_rank(lora):
    return forward_and_gradients(lora, inputs((2, 1, 2), 3, 6, 3, seed=40), seed=41)


@test_a_tall_layer_of_full_rank.judge
def _(out, ref):
    judge_layer(out, inputs((2, 1, 2), 3, 6, 3, seed=40))


@case("ex18_task2")
def test_svd_init_of_a_tall_layer(lora):
    original, shared = array(7, 3, seed=50), array(7, 3, seed=51)
    return {str(r): list(lora.svd_init(original, shared, r)) for r in range(4)}


@test_svd_init_of_a_tall_layer.judge
def _(out, ref):
    judge_svd(out, array(7, 3, seed=50), array(7, 3, seed=51))


@case("ex18_task2")
def test_svd_init_of_a_shared_layer_that_is_the_original(lora):
    """No residual: B A = 0 at every rank."""
    W = array(3, 4, seed=52)
    B, A = lora.svd_init(W, W.copy(), 2)
    return B @ A


@test_svd_init_of_a_shared_layer_that_is_the_original.judge
def _(out, ref):
    same(out, np.zeros((3, 4)), atol=1e-12)


@case("ex18_task2")
def test_svd_init_refuses_a_rank_too_high(lora):
    refused = []
    for rank in (4, -1):
        try:
            lora.svd_init(array(3, 4, seed=53), array(3, 4, seed=54), rank)
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
def test_break_even_of_cycle_and_of_not_shared(lora):
    """Cycle M = 2 of N = 4 with the attention and FFN of H = 8: 2 sets of 840 saved (1,680); each
    rank costs 4 positions × 144, so rank 2 (+1,152) saves and rank 3 (+1,728) does not. Not
    shared: -1."""
    return [lora.break_even_rank(ATTENTION_FFN, [0, 1, 0, 1]), lora.break_even_rank(ATTENTION_FFN, [0, 1, 2, 3])]


@test_break_even_of_cycle_and_of_not_shared.judge
def _(out, ref):
    assert out == [2, -1], out
### END HIDDEN TESTS
