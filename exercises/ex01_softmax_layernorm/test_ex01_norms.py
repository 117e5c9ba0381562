"""Cases of exercise 1: hand-worked values, and gradients against central differences of NumPy
versions of the three ops written here (the grader computes those; the submission only runs
forward and backward and returns the arrays).

Each probe calls ``norms`` (the student's module) and returns arrays; its judge, run by the
grader, checks them. Without a judge, a case compares with the reference solution."""
import math

import numpy as np

import minishare
from minishare.exercises.cases import case, same


def array(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def leaf(a):
    return minishare.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


def const(a):
    return minishare.tensor(np.asarray(a, dtype=np.float64))


# NumPy versions of the ops, for the judges (independent of the code under test)
def np_softmax(x, tau, axis=-1):
    z = x / tau
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def np_layer_norm(x, w, b, eps):
    mu, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def np_rms_norm(x, w, eps):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * w


def numeric_gradient(phi, a, eps=1e-6):
    """∂phi/∂a by central differences, a a float64 array (0-d allowed)."""
    a = np.array(a, dtype=np.float64)
    g = np.zeros_like(a)
    for i in np.ndindex(*a.shape):
        up, down = a.copy(), a.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (phi(up) - phi(down)) / (2 * eps)
    return g


def gradients(op, arrays, v, **options):
    """Probe helper: apply ``op`` to leaves holding ``arrays``, backward with cotangent ``v``,
    return the leaves' gradients."""
    leaves = [leaf(a) for a in arrays]
    op.apply(*leaves, **options).backward(v)
    return [t.grad for t in leaves]


def softmax_backward(norms, x, tau, g, axis=-1):
    """Probe helper: the op's backward alone, on the state its given forward saves (x, τ, the axis
    and y, here computed with NumPy), so task 2 is graded apart from task 1."""
    op = norms.SoftmaxWithTemperature()
    op.x, op.tau, op.axis, op.y = x, np.array(tau, dtype=np.float64), axis, np_softmax(x, tau, axis)
    return list(op.backward(g))


def check_gradients(out, f, arrays, v, rtol=1e-5, atol=1e-8):
    """Judge helper: ``out`` (the gradients) against central differences of Σ v ⊙ f(*arrays)."""
    assert isinstance(out, list) and len(out) == len(arrays), "one gradient per input expected"
    for k, a in enumerate(arrays):
        def phi(moved, k=k):
            args = list(arrays)
            args[k] = moved
            return float((v * f(*args)).sum())
        same(out[k], numeric_gradient(phi, a), rtol, atol, where=f"the gradient of input {k}")


# --------------------------------------------------------------------------- task 1
@case("ex01_task1")
def test_softmax_with_temperature_hand_worked(norms):
    """softmax(2 log(1, 2, 3) / 2) = (1, 2, 3)/6 and softmax(log(1, 2, 3) / 0.5) = (1, 4, 9)/14."""
    x = np.log([[1.0, 2.0, 3.0]])
    return [norms.softmax_with_temperature(2 * x, np.array(2.0)),
            norms.softmax_with_temperature(x, np.array(0.5), axis=-1)]


@test_softmax_with_temperature_hand_worked.judge
def _(out, ref):
    same(out, [np.array([[1 / 6, 2 / 6, 3 / 6]]), np.array([[1 / 14, 4 / 14, 9 / 14]])], rtol=1e-12)


@case("ex01_task1")
def test_large_logits_at_a_low_temperature_do_not_overflow(norms):
    """x / τ = 10⁵: exp of it overflows unless the row maximum is subtracted first."""
    x = np.array([[1000.0, 1000.0 + 0.01 * math.log(3)]])
    return norms.softmax_with_temperature(x, np.array(0.01), axis=-1)


@test_large_logits_at_a_low_temperature_do_not_overflow.judge
def _(out, ref):
    same(out, np.array([[0.25, 0.75]]), rtol=1e-9)


# --------------------------------------------------------------------------- task 2
@case("ex01_task2")
def test_softmax_backward_one_output_hand_worked(norms):
    """x = τ log(1, 1, 2), so y = (1/4, 1/4, 1/2) for τ = 1 and τ = 2; g = e₀. Then dL/dz is the
    first row of diag(y) - y yᵀ, dL/dx = dL/dz / τ and dL/dτ = -Σ dL/dz ⊙ x / τ²."""
    out = {}
    for tau in (1.0, 2.0):
        x = tau * np.log([[1.0, 1.0, 2.0]])
        out[f"tau={tau}"] = softmax_backward(norms, x, tau, np.array([[1.0, 0.0, 0.0]]))
    return out


@test_softmax_backward_one_output_hand_worked.judge
def _(out, ref):
    dz = np.array([[0.25 * 0.75, -0.25 * 0.25, -0.5 * 0.25]])
    same(out["tau=1.0"], [dz, np.array(math.log(2) / 8)], rtol=1e-12, where="[dL/dx, dL/dτ] at τ = 1")
    same(out["tau=2.0"], [dz / 2, np.array(math.log(2) / 16)], rtol=1e-12, where="[dL/dx, dL/dτ] at τ = 2")


@case("ex01_task2")
def test_softmax_backward_matches_finite_differences(norms):
    return softmax_backward(norms, array(3, 5, seed=1), 0.7, array(3, 5, seed=2))


@test_softmax_backward_matches_finite_differences.judge
def _(out, ref):
    check_gradients(out, np_softmax, [array(3, 5, seed=1), np.array(0.7)], array(3, 5, seed=2))


# --------------------------------------------------------------------------- task 3
@case("ex01_task3")
def test_layer_norm_forward_hand_worked(norms):
    """x = (1, 3): μ = 2, σ² = 1 (the biased variance), x̂ = (-1, 1); y = 2 x̂ + (0, 1)."""
    return norms.LayerNorm.apply(const([[1.0, 3.0]]), const([2.0, 2.0]), const([0.0, 1.0]), eps=0.0).numpy()


@test_layer_norm_forward_hand_worked.judge
def _(out, ref):
    same(out, np.array([[-2.0, 3.0]]), rtol=1e-12)


@case("ex01_task3")
def test_layer_norm_backward_matches_finite_differences(norms):
    return gradients(norms.LayerNorm, [array(4, 6, seed=1), array(6, seed=2), array(6, seed=3)], array(4, 6, seed=20))


@test_layer_norm_backward_matches_finite_differences.judge
def _(out, ref):
    check_gradients(out, lambda x, w, b: np_layer_norm(x, w, b, 1e-5),
                    [array(4, 6, seed=1), array(6, seed=2), array(6, seed=3)], array(4, 6, seed=20))


# --------------------------------------------------------------------------- task 4
@case("ex01_task4")
def test_rms_norm_forward_hand_worked(norms):
    """x = (3, 4): mean(x²) = 12.5, so y = (3, 4) / √12.5 ⊙ (1, 2)."""
    return norms.RMSNorm.apply(const([[3.0, 4.0]]), const([1.0, 2.0]), eps=0.0).numpy()


@test_rms_norm_forward_hand_worked.judge
def _(out, ref):
    rms = math.sqrt(12.5)
    same(out, np.array([[3 / rms, 8 / rms]]), rtol=1e-12)


@case("ex01_task4")
def test_rms_norm_backward_matches_finite_differences(norms):
    return gradients(norms.RMSNorm, [array(3, 5, seed=4), array(5, seed=5)], array(3, 5, seed=21))


@test_rms_norm_backward_matches_finite_differences.judge
def _(out, ref):
    check_gradients(out, lambda x, w: np_rms_norm(x, w, 1e-6), [array(3, 5, seed=4), array(5, seed=5)],
                    array(3, 5, seed=21))


### BEGIN HIDDEN TESTS
@case("ex01_task1")
def test_softmax_rows_of_very_different_scale(norms):
    """Each row needs its own maximum: with the maximum of the whole array, the row (0, 1) would
    become exp(-1000) = 0 everywhere, and 0 / 0."""
    x = np.array([[1000.0, 1001.0], [0.0, 1.0], [-1000.0, -999.0]])
    return norms.softmax_with_temperature(x, np.array(1.0), axis=-1)


@test_softmax_rows_of_very_different_scale.judge
def _(out, ref):
    p = 1 / (1 + math.e)
    same(out, np.array([[p, 1 - p]] * 3), rtol=1e-12)


@case("ex01_task1")
def test_softmax_along_the_first_axis_of_3d(norms):
    return norms.softmax_with_temperature(array(3, 2, 4, seed=6), np.array(1.3), axis=0)


@test_softmax_along_the_first_axis_of_3d.judge
def _(out, ref):
    same(out, np_softmax(array(3, 2, 4, seed=6), 1.3, axis=0), rtol=1e-12)


@case("ex01_task2")
def test_softmax_backward_along_the_first_axis_of_3d(norms):
    return softmax_backward(norms, array(3, 2, 4, seed=7), 0.4, array(3, 2, 4, seed=8), axis=0)


@test_softmax_backward_along_the_first_axis_of_3d.judge
def _(out, ref):
    check_gradients(out, lambda x, tau: np_softmax(x, tau, axis=0), [array(3, 2, 4, seed=7), np.array(0.4)],
                    array(3, 2, 4, seed=8))


@case("ex01_task2")
def test_softmax_backward_of_a_vector_at_a_high_temperature(norms):
    """A 1-D input (no batch axis) and τ = 3."""
    return softmax_backward(norms, array(6, seed=9), 3.0, array(6, seed=10))


@test_softmax_backward_of_a_vector_at_a_high_temperature.judge
def _(out, ref):
    check_gradients(out, np_softmax, [array(6, seed=9), np.array(3.0)], array(6, seed=10))


@case("ex01_task3")
def test_layer_norm_gradient_ignores_a_shift_of_the_row(norms):
    """LN(x + c) = LN(x) for any constant c per row, so dL/dx sums to zero along each row."""
    grad_x = gradients(norms.LayerNorm, [array(5, 7, seed=7), array(7, seed=8), array(7, seed=9)], array(5, 7, seed=10))[0]
    return grad_x.sum(axis=-1)


@test_layer_norm_gradient_ignores_a_shift_of_the_row.judge
def _(out, ref):
    same(out, np.zeros(5), atol=1e-10)


@case("ex01_task3")
def test_layer_norm_backward_3d_matches_finite_differences(norms):
    return gradients(norms.LayerNorm, [array(2, 3, 4, seed=11), array(4, seed=12), array(4, seed=13)],
                     array(2, 3, 4, seed=22), eps=1e-3)


@test_layer_norm_backward_3d_matches_finite_differences.judge
def _(out, ref):
    check_gradients(out, lambda x, w, b: np_layer_norm(x, w, b, 1e-3),
                    [array(2, 3, 4, seed=11), array(4, seed=12), array(4, seed=13)], array(2, 3, 4, seed=22))


@case("ex01_task3")
def test_layer_norm_forward_with_a_large_eps(norms):
    """eps goes inside the square root, added to the variance: a large eps tells where it is."""
    return norms.LayerNorm.apply(const(array(3, 4, seed=14)), const(array(4, seed=15)), const(array(4, seed=16)),
                                 eps=0.5).numpy()


@test_layer_norm_forward_with_a_large_eps.judge
def _(out, ref):
    same(out, np_layer_norm(array(3, 4, seed=14), array(4, seed=15), array(4, seed=16), 0.5), rtol=1e-12)


@case("ex01_task4")
def test_rms_norm_gradient_is_orthogonal_to_the_row_when_w_is_one(norms):
    """RMSNorm(s x) = RMSNorm(x) for s > 0 (eps = 0): the gradient has no component along x."""
    x = array(4, 6, seed=14)
    grad_x = gradients(norms.RMSNorm, [x, np.ones(6)], array(4, 6, seed=15), eps=0.0)[0]
    return (grad_x * x).sum(axis=-1)


@test_rms_norm_gradient_is_orthogonal_to_the_row_when_w_is_one.judge
def _(out, ref):
    same(out, np.zeros(4), atol=1e-10)


@case("ex01_task4")
def test_rms_norm_backward_3d_matches_finite_differences(norms):
    return gradients(norms.RMSNorm, [array(2, 3, 4, seed=16), array(4, seed=17)], array(2, 3, 4, seed=23), eps=1e-2)


@test_rms_norm_backward_3d_matches_finite_differences.judge
def _(out, ref):
    check_gradients(out, lambda x, w: np_rms_norm(x, w, 1e-2), [array(2, 3, 4, seed=16), array(4, seed=17)],
                    array(2, 3, 4, seed=23))


@case("ex01_task4")
def test_rms_norm_forward_with_a_large_eps(norms):
    return norms.RMSNorm.apply(const(array(3, 4, seed=18)), const(array(4, seed=19)), eps=0.5).numpy()


@test_rms_norm_forward_with_a_large_eps.judge
def _(out, ref):
    same(out, np_rms_norm(array(3, 4, seed=18), array(4, seed=19), 0.5), rtol=1e-12)
### END HIDDEN TESTS
