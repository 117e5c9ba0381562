"""Relaxed Recursive Transformers (Bae et al., 2024) and Basis Sharing (Wang et al., 2024): the
LoRA op against finite differences and NumPy, the SVD initialization against NumPy's SVD, the
conversions against the trained model they came from, the counts against hand computation."""
import numpy as np
import pytest

import minishare
from minishare import functional as F, gradcheck
from minishare.analysis import count_parameters
from minishare.errors import InvalidValue
from minishare.models import DecoderLM, TransformerConfig
from minishare.models.recursive import source_layers, to_basis_shared, to_recursive, to_relaxed
from minishare.nn import Linear, LoRALinear
from minishare.nn.basis import BasisLinear, basis_sharing, reconstruction_error
from minishare.nn.lora import lora_from_svd
from minishare.sharing import Plan
from conftest import host, leaf, randn

H, I, N, V = 8, 16, 4, 20


def lm(seed=0, norms_random=False, **fields):
    """A small float64 decoder-only LM (Pre-LN, N = 4), its LayerNorms random when asked, so that
    sharing them would change the model."""
    minishare.manual_seed(seed)
    model = DecoderLM(TransformerConfig(**{**dict(vocab_size=V, hidden_size=H, num_attention_heads=2,
                                                 intermediate_size=I, num_hidden_layers=N,
                                                 max_position_embeddings=16, norm_position="pre"),
                                           **fields})).double()
    if norms_random:
        rng = np.random.default_rng(seed + 100)
        for name, p in model.named_parameters():
            if "LayerNorm" in name:
                p.data = minishare.backend.asarray(1 + 0.3 * rng.standard_normal(p.shape))
    return model


IDS = np.array([[1, 2, 3, 4, 5, 6], [7, 8, 9, 1, 2, 3]])


def logits(model):
    return model(IDS).logits.numpy()


# --- the op ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("rank", [0, 1, 3])
def test_lora_linear_gradients_against_finite_differences(rank):
    x, W, b = leaf(randn(2, 3, 5, seed=1)), leaf(randn(4, 5, seed=2)), leaf(randn(4, seed=3))
    A, B = leaf(randn(rank, 5, seed=4)), leaf(randn(4, rank, seed=5))
    assert gradcheck(F.lora_linear, x, W, A, B, b, names=["x", "W", "A", "B", "b"])
    assert gradcheck(F.lora_linear, x, W, A, B, names=["x", "W", "A", "B"])    # no bias


def test_lora_linear_is_x_times_w_plus_ba():
    x, W, A, B, b = randn(2, 3, 5, seed=1), randn(4, 5, seed=2), randn(2, 5, seed=3), randn(4, 2, seed=4), randn(4, seed=5)
    y = F.lora_linear(leaf(x), leaf(W), leaf(A), leaf(B), leaf(b))
    np.testing.assert_allclose(host(y), x @ (W + B @ A).T + b, rtol=1e-12, atol=1e-12)


def test_a_shared_weight_gets_the_sum_of_its_positions_gradients():
    """Two positions relax one Linear: W's gradient is the sum of the gradients each position
    would send it alone (W + B₁A₁ and W + B₂A₂), and each B A gets only its own position's."""
    minishare.manual_seed(0)
    shared = Linear(5, 5).double()
    first, second = LoRALinear.relaxing(shared, 2), LoRALinear.relaxing(shared, 2)
    for p, seed in ((first.lora_B, 6), (second.lora_B, 7)):
        p.data = minishare.backend.asarray(randn(*p.shape, seed=seed))
    x, v = leaf(randn(3, 5, seed=8)), randn(3, 5, seed=9)
    second(first(x)).backward(v)
    together = host(shared.weight.grad)
    W, A1, B1, A2, B2 = (host(t) for t in (shared.weight, first.lora_A, first.lora_B, second.lora_A, second.lora_B))
    # by hand: h = x (W + B1 A1)ᵀ + b, y = h (W + B2 A2)ᵀ + b; dL/dW = g_yᵀ h + g_hᵀ x
    xs, b = host(x), host(shared.bias)
    h = xs @ (W + B1 @ A1).T + b
    g_h = v @ (W + B2 @ A2)
    np.testing.assert_allclose(together, v.T @ h + g_h.T @ xs, rtol=1e-10)
    np.testing.assert_allclose(host(first.lora_A.grad), (g_h @ B1).T @ xs, rtol=1e-10)


def test_rank_outside_its_range_is_refused():
    with pytest.raises(InvalidValue, match=r"\[0, 4\]"):
        LoRALinear(4, 6, 5)
    with pytest.raises(InvalidValue):
        lora_from_svd(np.ones((3, 2)), -1)


def test_standalone_lora_starts_as_its_linear_and_counts_r_times_in_plus_out():
    minishare.manual_seed(1)
    layer = LoRALinear(6, 4, 2)
    assert count_parameters(layer) == 6 * 4 + 4 + 2 * (6 + 4)
    np.testing.assert_array_equal(host(layer.lora_B), np.zeros((4, 2)))   # B = 0: B A = 0
    x = randn(3, 6, seed=2).astype(np.float32)
    np.testing.assert_allclose(host(layer(leaf(x))), x @ host(layer.weight).T + host(layer.bias), rtol=1e-5)


# --- the SVD initialization -----------------------------------------------------------------------
def test_svd_init_at_full_rank_is_the_original_layer_and_at_rank_zero_the_shared_one():
    minishare.manual_seed(2)
    shared = Linear(5, 3).double()
    original = randn(3, 5, seed=10)
    for rank, expected in ((3, original), (0, host(shared.weight))):
        layer = LoRALinear.relaxing(shared, rank).init_from_svd_(original)
        assert layer.weight is shared.weight and layer.bias is shared.bias
        np.testing.assert_allclose(host(layer.weight) + host(layer.lora_B) @ host(layer.lora_A), expected,
                                   rtol=1e-12, atol=1e-12)


def test_svd_init_is_the_best_rank_r_approximation():
    """Eckart–Young: the error of the rank-r part is the singular values it leaves out, and B
    holds them (B = U_r Σ_r, A = V_rᵀ, orthonormal rows)."""
    residual = randn(6, 4, seed=11)
    S = np.linalg.svd(residual, compute_uv=False)
    for r in range(5):
        B, A = lora_from_svd(residual, r)
        assert B.shape == (6, r) and A.shape == (r, 4)
        np.testing.assert_allclose(np.linalg.norm(residual - B @ A), np.sqrt((S[r:] ** 2).sum()), atol=1e-12)
        np.testing.assert_allclose(A @ A.T, np.eye(r), atol=1e-12)
        np.testing.assert_allclose(np.linalg.norm(B, axis=0), S[:r], rtol=1e-12)


# --- the conversions ------------------------------------------------------------------------------
def weights(model):
    """The query weight of every attention set."""
    return [host(s.sublayer.query.weight) for s in model.decoder.attention_sets]


def test_initializations_of_the_shared_sets():
    """Cycle M = 2 of N = 4: set 0 serves positions 0 and 2, set 1 serves 1 and 3."""
    trained = lm()
    W = weights(trained)
    cycle = Plan.build("cycle", N, 2)
    assert [source_layers(cycle, "ffn", j, "stepwise") for j in range(2)] == [[0], [2]]
    expected = {"average": [(W[0] + W[2]) / 2, (W[1] + W[3]) / 2], "stepwise": [W[0], W[2]], "lower": [W[0], W[1]]}
    for init, want in expected.items():
        got = weights(to_recursive(trained, cycle, init))
        assert len(got) == 2
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12, err_msg=init)
    sequence = weights(to_recursive(trained, Plan.build("sequence", N, 2), "average"))
    np.testing.assert_allclose(sequence[1], (W[2] + W[3]) / 2, rtol=1e-12)


def test_recursive_model_counts_one_layer_per_set_and_copies_the_rest():
    trained = lm()
    recursive = to_recursive(trained, Plan.build("cycle", N, 2))
    per_layer = 4 * (H * H + H) + 2 * H + (H * I + I) + (I * H + H) + 2 * H   # attention + LN, FFN + LN
    assert count_parameters(trained) - count_parameters(recursive) == 2 * per_layer
    np.testing.assert_array_equal(host(recursive.embeddings.word_embeddings.weight),
                                  host(trained.embeddings.word_embeddings.weight))
    assert recursive.embeddings.word_embeddings.weight is not trained.embeddings.word_embeddings.weight


def linears_per_layer():
    """(in, out) of every Linear of one layer: query, key, value, dense, FFN in, FFN out."""
    return [(H, H)] * 4 + [(H, I), (I, H)]


@pytest.mark.parametrize("rank", [1, 3])
def test_relaxed_counts_add_r_times_in_plus_out_per_matrix_and_position(rank):
    trained = lm()
    cycle = Plan.build("cycle", N, 2)
    relaxed = to_relaxed(trained, cycle, rank)
    lora = N * sum(rank * (i + o) for i, o in linears_per_layer())
    assert count_parameters(relaxed) == count_parameters(to_recursive(trained, cycle)) + lora


def test_relaxed_at_full_rank_is_the_trained_model():
    """Rank H (= min(in, out) of every Linear) with each position's LayerNorms its own: the
    trained model's outputs, LayerNorms random so that sharing them would show."""
    trained = lm(norms_random=True)
    relaxed = to_relaxed(trained, Plan.build("cycle", N, 2), H, unique_norms=True)
    np.testing.assert_allclose(logits(relaxed), logits(trained), rtol=1e-9, atol=1e-9)
    shared_norms = to_relaxed(trained, Plan.build("cycle", N, 2), H)
    assert np.abs(logits(shared_norms) - logits(trained)).max() > 1e-4   # the norms were averaged


def test_relaxed_at_full_rank_with_equal_norms_is_the_trained_model():
    """A freshly built model's LayerNorms are equal (ones and zeros), so sharing them loses nothing."""
    trained = lm(seed=3)
    for plan in (Plan.build("cycle", N, 2), Plan.build("sequence", N, 2), Plan.build("all-shared", N)):
        np.testing.assert_allclose(logits(to_relaxed(trained, plan, H)), logits(trained), rtol=1e-9, atol=1e-9)


def test_relaxed_at_rank_zero_is_the_recursive_model():
    trained = lm(norms_random=True)
    plan = Plan.build("cycle", N, 2)
    recursive = to_recursive(trained, plan, "stepwise")
    np.testing.assert_allclose(logits(to_relaxed(trained, plan, 0, "stepwise")), logits(recursive), rtol=1e-12)
    assert np.abs(logits(recursive) - logits(trained)).max() > 1e-4


def test_relaxed_positions_hold_the_shared_tensors_and_train_them_once():
    trained = lm()
    relaxed = to_relaxed(trained, Plan.build("cycle", N, 2), 2)
    sets = relaxed.decoder.ffn_sets
    assert len(sets) == N and sets[0].sublayer.ffn.weight is sets[2].sublayer.ffn.weight
    assert sets[0].sublayer.ffn.weight is not sets[1].sublayer.ffn.weight
    assert sets[0].sublayer.ffn.lora_A is not sets[2].sublayer.ffn.lora_A
    assert sets[0].LayerNorm is sets[2].LayerNorm
    assert relaxed.decoder.shared_plan == Plan.build("cycle", N, 2)
    # the shared W's gradient, end to end, against finite differences
    weight = sets[1].sublayer.ffn_output.weight
    gradcheck(lambda w: relaxed(IDS[:1, :3]).logits, weight)


def test_conversions_leave_the_trained_model_alone():
    trained = lm()
    before = {name: host(p).copy() for name, p in trained.named_parameters()}
    plan = Plan.build("cycle", N, 2)
    for converted in (to_recursive(trained, plan), to_relaxed(trained, plan, 2), to_basis_shared(trained, 2)):
        for p in converted.parameters():
            p.data = p.data + 1
    for name, p in trained.named_parameters():
        np.testing.assert_array_equal(host(p), before[name], err_msg=name)


def test_conversion_refuses_a_plan_of_another_depth_and_unknown_inits():
    with pytest.raises(InvalidValue, match="3 positions"):
        to_recursive(lm(), Plan.build("cycle", 3, 1))
    with pytest.raises(InvalidValue, match="init"):
        to_recursive(lm(), Plan.build("cycle", N, 2), "middle")


# --- Basis Sharing ----------------------------------------------------------------------------------
def test_basis_sharing_at_full_rank_reconstructs_and_the_error_falls_with_k():
    Ws = [randn(5, 3, seed=s) for s in range(4)]        # stacked: 5 × 12, rank 5
    basis, coefficients = basis_sharing(Ws, 5)
    for W, C in zip(Ws, coefficients):
        np.testing.assert_allclose(basis @ C, W, rtol=1e-10, atol=1e-12)
    errors = [reconstruction_error(Ws, k) for k in range(1, 6)]
    assert all(a > b for a, b in zip(errors, errors[1:])) and errors[-1] < 1e-12
    S = np.linalg.svd(np.concatenate(Ws, axis=1), compute_uv=False)
    np.testing.assert_allclose(errors[1], np.sqrt((S[2:] ** 2).sum() / (S ** 2).sum()), rtol=1e-10)


def test_basis_linear_computes_x_times_bc_and_shares_one_basis():
    minishare.manual_seed(4)
    trained = lm()
    shared = to_basis_shared(trained, 3)
    queries = [s.sublayer.query for s in shared.decoder.attention_sets]
    assert all(isinstance(q, BasisLinear) and q.basis is queries[0].basis for q in queries)
    assert queries[0].coefficients is not queries[1].coefficients
    x = randn(2, H, seed=12)
    q = queries[1]
    np.testing.assert_allclose(host(q(leaf(x))), x @ (host(q.basis) @ host(q.coefficients)).T + host(q.bias),
                               rtol=1e-10)
    # per weight type: one basis out × k, N coefficients k × in, biases unchanged
    k = 3
    linears = sum(o * k + N * k * i for i, o in linears_per_layer())
    dense = N * sum(i * o for i, o in linears_per_layer())
    assert count_parameters(trained) - count_parameters(shared) == dense - linears


def test_basis_shared_model_at_full_rank_is_the_trained_model():
    trained = lm(norms_random=True)
    np.testing.assert_allclose(logits(to_basis_shared(trained, I)), logits(trained), rtol=1e-9, atol=1e-9)
    assert np.abs(logits(to_basis_shared(trained, 1)) - logits(trained)).max() > 1e-4
