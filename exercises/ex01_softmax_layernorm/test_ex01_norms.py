"""Cases of exercise 1: hand-worked values, gradients compared with the reference solution's on
the same inputs, and, in the hidden cases, gradients against central differences of NumPy
versions of the three ops (the grader computes those; the submission only runs forward and
backward and returns the arrays).

Each probe calls ``norms`` (the student's module) and returns arrays; its judge, run by the
grader, checks them. Random inputs are drawn by each case's ``given`` function, on the grader's
side, as is the softmax that task 2's probe hands to the backward (it is task 1's answer).
The NumPy ops are the tasks' forward passes, so they sit with the hidden cases, which the
release leaves out: a visible case compares with the reference solution (``ref``)."""
import math

import numpy as np

import minishare
from minishare.grader.cases import case, same


def leaf(a):
    return minishare.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


def const(a):
    return minishare.tensor(np.asarray(a, dtype=np.float64))


def normals(rng, *shapes):
    """Given helper: one standard normal array per shape."""
    return [rng.standard_normal(shape) for shape in shapes]


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


def softmax_state(x, tau, g, axis=-1):
    """Given helper: the state the op's given forward saves (x, τ, the axis and y) and the
    cotangent g, for ``softmax_backward`` (``np_softmax`` is defined with the hidden cases)."""
    return {"x": x, "tau": tau, "axis": axis, "y": np_softmax(x, tau, axis), "g": g}


def softmax_backward(norms, state):
    """Probe helper: the op's backward alone, on the state of ``softmax_state``, so task 2 is
    graded apart from task 1."""
    op = norms.SoftmaxWithTemperature()
    op.x, op.tau, op.axis, op.y = state["x"], np.array(state["tau"], dtype=np.float64), state["axis"], state["y"]
    return list(op.backward(state["g"]))


def check_gradients(out, f, arrays, v, rtol=1e-5, atol=1e-8):
    """Judge helper: ``out`` (the gradients) against central differences of Σ v ⊙ f(*arrays)."""
    assert isinstance(out, list) and len(out) == len(arrays), "one gradient per input expected"
    for k, a in enumerate(arrays):
        def phi(moved, k=k):
            args = list(arrays)
            args[k] = moved
            return float((v * f(*args)).sum())
        same(out[k], numeric_gradient(phi, a), rtol, atol, where=f"the gradient of input {k}")


def same_as_reference(out, ref):
    """Judge helper of the visible random cases: the gradients equal the reference solution's on
    the same inputs (an exact backward; rounding differs only in the last digits)."""
    same(out, ref, rtol=1e-9, atol=1e-12, where="the gradients")


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


@case("ex01_task1")
def test_a_high_temperature_divides_before_the_exponential(norms):
    """x = (0, -800) at τ = 100 is softmax(0, -8) = (0.99966, 3.4e-4). Taking softmax(x) first and
    then its power 1/τ gives (1, 0): exp(-800) has already underflowed to 0."""
    return norms.softmax_with_temperature(np.array([0.0, -800.0]), np.array(100.0))


@test_a_high_temperature_divides_before_the_exponential.judge
def _(out, ref):
    e = math.exp(-8.0)
    same(out, np.array([1 / (1 + e), e / (1 + e)]), rtol=1e-12)


# --------------------------------------------------------------------------- task 2
@case("ex01_task2")
def test_softmax_backward_one_output_hand_worked(norms, given):
    """x = τ log(1, 1, 2), so y = (1/4, 1/4, 1/2) for τ = 1 and τ = 2; g = e₀. Then dL/dz is the
    first row of diag(y) - y yᵀ, dL/dx = dL/dz / τ and dL/dτ = -Σ dL/dz ⊙ x / τ²."""
    return {key: softmax_backward(norms, state) for key, state in given.items()}


@test_softmax_backward_one_output_hand_worked.given
def _(rng):
    return {f"tau={tau}": softmax_state(tau * np.log([[1.0, 1.0, 2.0]]), tau, np.array([[1.0, 0.0, 0.0]]))
            for tau in (1.0, 2.0)}


@test_softmax_backward_one_output_hand_worked.judge
def _(out, ref):
    dz = np.array([[0.25 * 0.75, -0.25 * 0.25, -0.5 * 0.25]])
    same(out["tau=1.0"], [dz, np.array(math.log(2) / 8)], rtol=1e-12, where="[dL/dx, dL/dτ] at τ = 1")
    same(out["tau=2.0"], [dz / 2, np.array(math.log(2) / 16)], rtol=1e-12, where="[dL/dx, dL/dτ] at τ = 2")


@case("ex01_task2")
def test_softmax_backward_on_random_inputs(norms, given):
    return softmax_backward(norms, given)


@test_softmax_backward_on_random_inputs.given
def _(rng):
    x, g = normals(rng, (3, 5), (3, 5))
    return softmax_state(x, 0.7, g)


@test_softmax_backward_on_random_inputs.judge
def _(out, ref):
    same_as_reference(out, ref)


# --------------------------------------------------------------------------- task 3
@case("ex01_task3")
def test_layer_norm_forward_hand_worked(norms):
    """x = (1, 3): μ = 2, σ² = 1 (the biased variance), x̂ = (-1, 1); y = 2 x̂ + (0, 1)."""
    return norms.LayerNorm.apply(const([[1.0, 3.0]]), const([2.0, 2.0]), const([0.0, 1.0]), eps=0.0).numpy()


@test_layer_norm_forward_hand_worked.judge
def _(out, ref):
    same(out, np.array([[-2.0, 3.0]]), rtol=1e-12)


@case("ex01_task3")
def test_layer_norm_backward_on_random_inputs(norms, given):
    return gradients(norms.LayerNorm, given["x, w, b"], given["v"])


@test_layer_norm_backward_on_random_inputs.given
def _(rng):
    return {"x, w, b": normals(rng, (4, 6), 6, 6), "v": rng.standard_normal((4, 6))}


@test_layer_norm_backward_on_random_inputs.judge
def _(out, ref):
    same_as_reference(out, ref)


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
def test_rms_norm_backward_on_random_inputs(norms, given):
    return gradients(norms.RMSNorm, given["x, w"], given["v"])


@test_rms_norm_backward_on_random_inputs.given
def _(rng):
    return {"x, w": normals(rng, (3, 5), 5), "v": rng.standard_normal((3, 5))}


@test_rms_norm_backward_on_random_inputs.judge
def _(out, ref):
    same_as_reference(out, ref)


### BEGIN HIDDEN TESTS
# NumPy versions of the ops (independent of the code under test), for the hidden judges and the
# given functions. They are the tasks' forward passes: the release must not ship them.
def np_softmax(x, tau, axis=-1):
    z = x / tau
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def np_layer_norm(x, w, b, eps):
    mu, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def np_rms_norm(x, w, eps):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * w


def check_softmax_gradients(out, state):
    """Judge helper: task 2's [dL/dx, dL/dτ] against central differences of NumPy's softmax."""
    check_gradients(out, lambda x, tau: np_softmax(x, tau, state["axis"]), [state["x"], np.array(state["tau"])],
                    state["g"])


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
def test_softmax_along_the_first_axis_of_3d(norms, given):
    return norms.softmax_with_temperature(given, np.array(1.3), axis=0)


@test_softmax_along_the_first_axis_of_3d.given
def _(rng):
    return rng.standard_normal((3, 2, 4))


@test_softmax_along_the_first_axis_of_3d.judge
def _(out, ref, given):
    same(out, np_softmax(given, 1.3, axis=0), rtol=1e-12)


@case("ex01_task2")
def test_softmax_backward_along_the_first_axis_of_3d(norms, given):
    return softmax_backward(norms, given)


@test_softmax_backward_along_the_first_axis_of_3d.given
def _(rng):
    x, g = normals(rng, (3, 2, 4), (3, 2, 4))
    return softmax_state(x, 0.4, g, axis=0)


@test_softmax_backward_along_the_first_axis_of_3d.judge
def _(out, ref, given):
    check_softmax_gradients(out, given)


@case("ex01_task2")
def test_softmax_backward_of_a_vector_at_a_high_temperature(norms, given):
    """A 1-D input (no batch axis) and τ = 3."""
    return softmax_backward(norms, given)


@test_softmax_backward_of_a_vector_at_a_high_temperature.given
def _(rng):
    x, g = normals(rng, 6, 6)
    return softmax_state(x, 3.0, g)


@test_softmax_backward_of_a_vector_at_a_high_temperature.judge
def _(out, ref, given):
    check_softmax_gradients(out, given)


@case("ex01_task3")
def test_layer_norm_gradient_ignores_a_shift_of_the_row(norms, given):
    """LN(x + c) = LN(x) for any constant c per row, so dL/dx sums to zero along each row."""
    return gradients(norms.LayerNorm, given["x, w, b"], given["v"])[0].sum(axis=-1)


@test_layer_norm_gradient_ignores_a_shift_of_the_row.given
def _(rng):
    return {"x, w, b": normals(rng, (5, 7), 7, 7), "v": rng.standard_normal((5, 7))}


@test_layer_norm_gradient_ignores_a_shift_of_the_row.judge
def _(out, ref):
    same(out, np.zeros(5), atol=1e-10)


@case("ex01_task3")
def test_layer_norm_backward_3d_matches_finite_differences(norms, given):
    return gradients(norms.LayerNorm, given["x, w, b"], given["v"], eps=1e-3)


@test_layer_norm_backward_3d_matches_finite_differences.given
def _(rng):
    return {"x, w, b": normals(rng, (2, 3, 4), 4, 4), "v": rng.standard_normal((2, 3, 4))}


@test_layer_norm_backward_3d_matches_finite_differences.judge
def _(out, ref, given):
    check_gradients(out, lambda x, w, b: np_layer_norm(x, w, b, 1e-3), given["x, w, b"], given["v"])


@case("ex01_task3")
def test_layer_norm_forward_with_a_large_eps(norms, given):
    """eps goes inside the square root, added to the variance: a large eps tells where it is."""
    return norms.LayerNorm.apply(*(const(a) for a in given), eps=0.5).numpy()


@test_layer_norm_forward_with_a_large_eps.given
def _(rng):
    return normals(rng, (3, 4), 4, 4)


@test_layer_norm_forward_with_a_large_eps.judge
def _(out, ref, given):
    same(out, np_layer_norm(*given, 0.5), rtol=1e-12)


@case("ex01_task4")
def test_rms_norm_gradient_is_orthogonal_to_the_row_when_w_is_one(norms, given):
    """RMSNorm(s x) = RMSNorm(x) for s > 0 (eps = 0): the gradient has no component along x."""
    x = given["x"]
    grad_x = gradients(norms.RMSNorm, [x, np.ones(6)], given["v"], eps=0.0)[0]
    return (grad_x * x).sum(axis=-1)


@test_rms_norm_gradient_is_orthogonal_to_the_row_when_w_is_one.given
def _(rng):
    return {"x": rng.standard_normal((4, 6)), "v": rng.standard_normal((4, 6))}


@test_rms_norm_gradient_is_orthogonal_to_the_row_when_w_is_one.judge
def _(out, ref):
    same(out, np.zeros(4), atol=1e-10)


@case("ex01_task4")
def test_rms_norm_backward_3d_matches_finite_differences(norms, given):
    return gradients(norms.RMSNorm, given["x, w"], given["v"], eps=1e-2)


@test_rms_norm_backward_3d_matches_finite_differences.given
def _(rng):
    return {"x, w": normals(rng, (2, 3, 4), 4), "v": rng.standard_normal((2, 3, 4))}


@test_rms_norm_backward_3d_matches_finite_differences.judge
def _(out, ref, given):
    check_gradients(out, lambda x, w: np_rms_norm(x, w, 1e-2), given["x, w"], given["v"])


@case("ex01_task4")
def test_rms_norm_forward_with_a_large_eps(norms, given):
    return norms.RMSNorm.apply(*(const(a) for a in given), eps=0.5).numpy()


@test_rms_norm_forward_with_a_large_eps.given
def _(rng):
    return normals(rng, (3, 4), 4)


@test_rms_norm_forward_with_a_large_eps.judge
def _(out, ref, given):
    same(out, np_rms_norm(*given, 0.5), rtol=1e-12)
### END HIDDEN TESTS
