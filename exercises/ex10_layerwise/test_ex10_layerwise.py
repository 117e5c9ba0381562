"""Cases of exercise 10 with states built by hand: rotations by known angles, scalings by known
factors, padding that must not count, and a model whose layers are made to do nothing.

Each probe calls ``layerwise`` (the student's module) and returns its arrays and floats; the judges
compare with the known angles, or, in the hidden cases, with ``reference_transitions``, written
here in NumPy, on the random states the grader drew anew for every submission (it is task 1's
answer, so it sits with the hidden cases, which the release leaves out)."""
import math

import numpy as np

import minishare
from minishare.grader.cases import case, raises
from minishare.models import AlbertConfig, AlbertModel


def rotated(theta, scale=1.0):
    """(1, 1, 3): e1, and e1 rotated by theta in the e1-e2 plane and scaled."""
    return (np.array([[[1.0, 0.0, 0.0]]]),
            scale * np.array([[[math.cos(theta), math.sin(theta), 0.0]]]))


def turned_back(delta, scale=1.0):
    """(1, 1, 3): e1, and a vector at 180° − delta from it (−cos δ, sin δ, 0), scaled."""
    return (np.array([[[1.0, 0.0, 0.0]]]),
            scale * np.array([[[-math.cos(delta), math.sin(delta), 0.0]]]))


def close(actual, expected, rel, abs=0.0):
    return math.isclose(float(actual), float(expected), rel_tol=rel, abs_tol=abs)


@case("ex10_task1")
def test_orthogonal_and_opposite_vectors(layerwise):
    return [[d, a] for d, a in (layerwise.token_transitions(*rotated(math.pi / 2)),
                                layerwise.token_transitions(*rotated(math.pi, scale=2.0)))]


@test_orthogonal_and_opposite_vectors.judge
def _(out, ref):
    (d1, a1), (d2, a2) = out
    assert d1.shape == a1.shape == (1, 1), (d1.shape, a1.shape)
    assert close(d1[0, 0], math.sqrt(2), 1e-9) and close(a1[0, 0], 90.0, 1e-9), (d1, a1)
    assert close(d2[0, 0], 3.0, 1e-9) and close(a2[0, 0], 180.0, 1e-9), (d2, a2)


@case("ex10_task1")
def test_tiny_angles_are_accurate(layerwise):
    return [layerwise.token_transitions(*rotated(theta, scale=3.0))[1] for theta in (1e-7, 1e-5, 0.01)]


@test_tiny_angles_are_accurate.judge
def _(out, ref):
    for theta, a in zip((1e-7, 1e-5, 0.01), out):
        assert close(a[0, 0], math.degrees(theta), 1e-6), (theta, a[0, 0], math.degrees(theta))


@case("ex10_task1")
def test_nearly_opposite_angles_are_accurate(layerwise):
    """180° − θ must be accurate too, where arcsin of half the chord is flat."""
    return [layerwise.token_transitions(*turned_back(delta, scale=3.0))[1] for delta in (1e-7, 1e-6, 1e-5)]


@test_nearly_opposite_angles_are_accurate.judge
def _(out, ref):
    for delta, a in zip((1e-7, 1e-6, 1e-5), out):
        assert close(180.0 - a[0, 0], math.degrees(delta), 1e-6), (delta, 180.0 - a[0, 0], math.degrees(delta))


@case("ex10_task2")
def test_means_skip_padding(layerwise):
    h0 = np.zeros((1, 2, 2)); h0[0, :, 0] = 1.0                     # two tokens along e1
    h1 = h0.copy(); h1[0, 0] = [0.0, 1.0]; h1[0, 1] = [-5.0, 0.0]   # real: 90°, padding: 180°
    return layerwise.layer_transitions([h0, h1], attention_mask=np.array([[1, 0]]))


@test_means_skip_padding.judge
def _(out, ref):
    assert set(out) == {"l2", "degrees"} and len(out["l2"]) == len(out["degrees"]) == 1, out
    assert close(out["degrees"][0], 90.0, 1e-9) and close(out["l2"][0], math.sqrt(2), 1e-9), out


def small_config(**overrides):
    return AlbertConfig(**{**dict(vocab_size=20, embedding_size=4, hidden_size=8, num_hidden_layers=3,
                                  num_attention_heads=2, intermediate_size=16, max_position_embeddings=8),
                           **overrides})


@case("ex10_task3")
def test_model_runs_in_eval_mode_and_gives_n_values(layerwise):
    minishare.manual_seed(0)
    model = AlbertModel(small_config(hidden_dropout_prob=0.5))
    ids = np.array([[1, 2, 3, 4]])
    a, b = layerwise.model_transitions(model, ids), layerwise.model_transitions(model, ids)
    return {"first": a, "second": b, "training after": model.training}


@test_model_runs_in_eval_mode_and_gives_n_values.judge
def _(out, ref):
    a, b = out["first"], out["second"]
    assert a == b, "two calls differ: is dropout still on?"              # no dropout: repeatable
    assert len(a["l2"]) == 3 and len(a["degrees"]) == 3, a
    assert out["training after"] is True, "the model must be back in training mode"


### BEGIN HIDDEN TESTS
def reference_transitions(h_in, h_out):
    """(distance, angle in degrees), each (B, T), in float64 by Kahan's formula
    θ = 2·atan2(‖û − v̂‖, ‖û + v̂‖), accurate for every angle."""
    a, b = np.asarray(h_in, dtype=np.float64), np.asarray(h_out, dtype=np.float64)
    u = a / np.linalg.norm(a, axis=-1, keepdims=True)
    v = b / np.linalg.norm(b, axis=-1, keepdims=True)
    angle = 2 * np.arctan2(np.linalg.norm(u - v, axis=-1), np.linalg.norm(u + v, axis=-1))
    return np.linalg.norm(b - a, axis=-1), np.degrees(angle)


def a_seed(rng):
    """A seed for minishare's initialization, drawn by the grader."""
    return int(rng.integers(2 ** 32))


@case("ex10_task1")
def test_same_direction_is_zero_degrees(layerwise, given):
    h = given["h"]
    return {"same": layerwise.token_transitions(h, h)[1], "scaled": layerwise.token_transitions(h, 2.5 * h)}


@test_same_direction_is_zero_degrees.given
def _(rng):
    return {"h": rng.standard_normal((2, 3, 5))}


@test_same_direction_is_zero_degrees.judge
def _(out, ref, given):
    assert (out["same"] == 0).all(), out["same"]                     # a layer that changes nothing
    d, a = out["scaled"]
    assert (a < 1e-6).all(), a
    np.testing.assert_allclose(d, 1.5 * np.linalg.norm(given["h"], axis=-1), rtol=1e-12)


@case("ex10_task1")
def test_float32_states_and_every_angle(layerwise, given):
    """float32 states (as a model on a GPU gives them), H = 16, angles from 1e-5 rad to nearly π:
    the angle between the vectors as stored, computed in float64."""
    distance, angle = layerwise.token_transitions(given["h_in"], given["h_out"])
    return {"distance": distance, "angle": angle}


@test_float32_states_and_every_angle.given
def _(rng):
    h_in = rng.standard_normal((3, 4, 16)).astype(np.float32)
    step = rng.standard_normal((3, 4, 16)) * np.logspace(-5, 0.5, 12).reshape(3, 4, 1)
    h_out = (h_in + step).astype(np.float32)
    h_out[2, 3] = -h_in[2, 3] + np.float32(1e-5) * rng.standard_normal(16).astype(np.float32)   # nearly opposite
    return {"h_in": h_in, "h_out": h_out}


@test_float32_states_and_every_angle.judge
def _(out, ref, given):
    assert out["distance"].dtype == np.float64 and out["angle"].dtype == np.float64, \
        (out["distance"].dtype, out["angle"].dtype)
    distance, angle = reference_transitions(given["h_in"], given["h_out"])
    np.testing.assert_allclose(out["distance"], distance, rtol=1e-9)
    np.testing.assert_allclose(out["angle"], angle, rtol=1e-6)
    np.testing.assert_allclose(180.0 - out["angle"][2, 3], 180.0 - angle[2, 3], rtol=1e-6)


@case("ex10_task2")
def test_layers_average_over_examples_token_by_token(layerwise):
    h0 = np.zeros((2, 1, 2)); h0[:, 0, 0] = 1.0
    h1 = h0.copy(); h1[0, 0] = [0.0, 1.0]                            # 90° for one token, 0° for the other
    h2 = h1.copy()
    return layerwise.layer_transitions([h0, h1, h2])


@test_layers_average_over_examples_token_by_token.judge
def _(out, ref):
    np.testing.assert_allclose(out["degrees"], [45.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(out["l2"], [math.sqrt(2) / 2, 0.0], atol=1e-12)


def padded_states(rng):
    """Four states (B = 3, T = 4, H = 6) and a mask with 4, 1 and 2 real tokens."""
    states = [rng.standard_normal((3, 4, 6))]
    for _ in range(3):
        states.append(states[-1] + rng.standard_normal((3, 4, 6)) * rng.uniform(0.1, 2.0, (3, 4, 1)))
    return {"states": states, "mask": np.array([[1, 1, 1, 1], [1, 0, 0, 0], [1, 1, 0, 0]])}


@case("ex10_task2")
def test_every_real_token_weighs_the_same(layerwise, given):
    """Examples of different lengths: a mean over the examples' means, or one that counts the
    padding, gives other numbers."""
    return layerwise.layer_transitions(given["states"], attention_mask=given["mask"])


@test_every_real_token_weighs_the_same.given
def _(rng):
    return padded_states(rng)


@test_every_real_token_weighs_the_same.judge
def _(out, ref, given):
    states, keep = given["states"], given["mask"].astype(bool)
    for l in range(3):
        distance, angle = reference_transitions(states[l], states[l + 1])
        assert close(out["l2"][l], distance[keep].mean(), 1e-9), (l, out["l2"][l], distance[keep].mean())
        assert close(out["degrees"][l], angle[keep].mean(), 1e-9), (l, out["degrees"][l], angle[keep].mean())


@case("ex10_task2")
def test_no_real_token_is_refused(layerwise, given):
    return raises(ValueError, layerwise.layer_transitions, given["states"], np.zeros((3, 4), dtype=np.int64))


@test_no_real_token_is_refused.given
def _(rng):
    return padded_states(rng)


class Spy(AlbertModel):
    """An AlbertModel that remembers, at every forward, whether a graph was being recorded and
    whether it was in training mode."""

    def __init__(self, config):
        super().__init__(config)
        self.seen = []

    def forward(self, *args, **kwargs):
        self.seen.append([minishare.is_grad_enabled(), self.training])
        return super().forward(*args, **kwargs)


@case("ex10_task3")
def test_no_graph_eval_mode_and_mode_restored(layerwise):
    minishare.manual_seed(3)
    model = Spy(small_config(hidden_dropout_prob=0.3))
    layerwise.model_transitions(model, np.array([[1, 2, 3]]))
    model.eval()
    layerwise.model_transitions(model, np.array([[4, 5, 6]]))
    return {"seen": model.seen, "training after eval": model.training}


@test_no_graph_eval_mode_and_mode_restored.judge
def _(out, ref):
    assert out["seen"], "the model was never called"
    assert all(not grad for grad, _ in out["seen"]), "the forward recorded a graph (use minishare.no_grad())"
    assert all(not training for _, training in out["seen"]), "the forward ran in training mode"
    assert out["training after eval"] is False, "a model in eval mode must stay in eval mode"


@case("ex10_task3", rtol=1e-6, atol=1e-9)
def test_padding_is_masked_in_the_model_too(layerwise, given):
    """Padding positions hold other ids: the model must be given the mask, or they leak into the
    real tokens' states through attention (compared with the reference solution on the same
    model)."""
    minishare.manual_seed(given["seed"])
    model = AlbertModel(small_config(num_hidden_layers=2))
    ids = np.array([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]])
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    return layerwise.model_transitions(model, ids, attention_mask=mask)


@test_padding_is_masked_in_the_model_too.given
def _(rng):
    return {"seed": a_seed(rng)}


@case("ex10_task3")
def test_a_model_with_identity_layers_changes_nothing(layerwise):
    """Zero every sublayer's output weights: each residual adds zero, Pre-LN leaves x as it is."""
    minishare.manual_seed(1)
    config = small_config(embedding_size=8, num_hidden_layers=2, norm_position="pre", sharing="not-shared")
    model = AlbertModel(config)
    for name, p in model.named_parameters():
        if name.endswith(("dense.weight", "dense.bias", "ffn_output.weight", "ffn_output.bias")) and "encoder" in name:
            p.data = p.data * 0
    return layerwise.model_transitions(model, np.array([[1, 2, 3]]), attention_mask=np.array([[1, 1, 1]]))


@test_a_model_with_identity_layers_changes_nothing.judge
def _(out, ref):
    np.testing.assert_allclose(out["l2"], [0.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(out["degrees"], [0.0, 0.0], atol=1e-4)
### END HIDDEN TESTS
