"""Relaxed Recursive Transformers (Bae et al., 2024) and Basis Sharing (Wang et al., 2024): the
LoRA op against finite differences and NumPy, the SVD initialization against NumPy's SVD, the
conversions against the trained model they came from and against models tied and relaxed by hand,
the counts against hand computation."""
import copy

import numpy as np
import pytest

import minishare
from minishare import functional as F, gradcheck
from minishare.analysis import count_parameters
from minishare.errors import InvalidValue
from minishare.models import AlbertConfig, AlbertModel, DecoderLM, EncoderDecoderModel, TransformerConfig
from minishare.models.recursive import source_layers, to_basis_shared, to_recursive, to_relaxed
from minishare.nn import Linear, LoRALinear
from minishare.nn.basis import BasisLinear, basis_sharing, reconstruction_error
from minishare.nn.lora import lora_from_svd
from minishare.nn.transformer import encoder
from minishare.sharing import Plan
from conftest import SET_NAME, host, leaf, randn

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


# By hand, without the library's conversion: Cycle with M = 2 over N = 4 positions gives position ℓ
# the set ℓ mod 2, which starts from positions {j, j + 2} ("average"), j·N/M ("stepwise") or j
# ("lower"); the trained models are not shared, so position ℓ's weights are its own set ℓ.
BY_HAND = {"average": lambda j: [j, j + 2], "stepwise": lambda j: [2 * j], "lower": lambda j: [j]}


def tied_by_hand(state, init):
    """The state of a not-shared model computing the Cycle M = 2 conversion of ``state`` (a
    not-shared model's): every set's tensors the mean of the positions ``init`` picks."""
    tied = {}
    for name, value in state.items():
        m = SET_NAME.match(name)
        if m is None:
            tied[name] = value
            continue
        sources = [state[f"{m['prefix']}{m['component']}_sets.{s}.{m['rest']}"]
                   for s in BY_HAND[init](int(m["index"]) % 2)]
        tied[name] = sum(sources) / len(sources)
    return tied


def small(kind):
    """A not-shared float64 model of N = 4 with random LayerNorms: a decoder-only LM, an
    encoder-decoder (three components, two stacks) or ALBERT (Post-LN, E < H)."""
    minishare.manual_seed(5)
    sizes = dict(vocab_size=V, hidden_size=H, num_attention_heads=2, intermediate_size=I,
                 num_hidden_layers=N, max_position_embeddings=16)
    if kind == "lm":
        model = lm(norms_random=True)
    elif kind == "seq2seq":
        model = EncoderDecoderModel(TransformerConfig(**sizes)).double()
    else:
        model = AlbertModel(AlbertConfig(**sizes, embedding_size=4, sharing="not-shared")).double()
    rng = np.random.default_rng(6)
    for name, p in model.named_parameters():
        if "LayerNorm" in name:
            p.data = minishare.backend.asarray(1 + 0.3 * rng.standard_normal(p.shape))
    return model


def outputs(model):
    if isinstance(model, EncoderDecoderModel):
        return model(IDS, IDS[:, :4]).logits.numpy()
    if isinstance(model, AlbertModel):
        return model(IDS).last_hidden_state.numpy()
    return logits(model)


def rebuilt(model, state):
    """A not-shared model of ``model``'s class and sizes holding ``state``."""
    plain = type(model)(model.config).double()
    return plain.load_state_dict({name: host(value) for name, value in state.items()})


@pytest.mark.parametrize("kind", ["lm", "seq2seq", "albert"])
@pytest.mark.parametrize("init", list(BY_HAND))
def test_recursive_model_computes_the_model_tied_by_hand(kind, init):
    trained = small(kind)
    recursive = to_recursive(trained, Plan.build("cycle", N, 2), init)
    by_hand = rebuilt(trained, tied_by_hand(trained.state_dict(), init))
    np.testing.assert_allclose(outputs(recursive), outputs(by_hand), rtol=1e-12, atol=1e-12)
    assert np.abs(outputs(recursive) - outputs(trained)).max() > 1e-4      # tying changed the model


def test_recursive_model_is_the_one_its_config_describes():
    """Built from its own configuration, the converted model has the same parameters, in the same
    order (the optimizer's and the gradient norm's), and computes the same outputs."""
    recursive = to_recursive(small("seq2seq"), Plan.build("cycle-rev", N, 2), "stepwise")
    again = type(recursive)(recursive.config).double().load_state_dict(
        {name: host(value) for name, value in recursive.state_dict().items()})
    assert [name for name, _ in again.named_parameters()] == [name for name, _ in recursive.named_parameters()]
    np.testing.assert_array_equal(outputs(again), outputs(recursive))


@pytest.mark.parametrize("rank", [1, 3])
def test_relaxed_lora_is_the_truncated_svd_of_each_layers_residual(rank):
    """Bae et al. (2024): position ℓ's B A is the rank-r truncated SVD of W_ℓ − W'_set(ℓ), with the
    singular values in B (B = U_r Σ_r, A = V_rᵀ); the relaxed model computes, at every position,
    the averaged weights plus that correction (LayerNorms and biases shared, averaged)."""
    trained = small("lm")
    relaxed = to_relaxed(trained, Plan.build("cycle", N, 2), rank)
    state = {name: host(value) for name, value in trained.state_dict().items()}    # NumPy: SVD by hand
    tied = tied_by_hand(state, "average")
    by_hand = dict(tied)
    lora = {name: host(p) for name, p in relaxed.named_parameters(remove_duplicate=False) if ".lora_" in name}
    for name, value in state.items():
        if SET_NAME.match(name) and value.ndim == 2:                    # a Linear's weight, (out, in)
            U, S, Vt = np.linalg.svd(value - tied[name], full_matrices=False)
            correction = (U[:, :rank] * S[:rank]) @ Vt[:rank]
            by_hand[name] = tied[name] + correction
            B, A = lora[name[:-len("weight")] + "lora_B"], lora[name[:-len("weight")] + "lora_A"]
            np.testing.assert_allclose(B @ A, correction, rtol=1e-9, atol=1e-12, err_msg=name)
            np.testing.assert_allclose(np.linalg.norm(B, axis=0), S[:rank], rtol=1e-9, err_msg=name)
            np.testing.assert_allclose(A @ A.T, np.eye(rank), atol=1e-12, err_msg=name)
    np.testing.assert_allclose(logits(relaxed), logits(rebuilt(trained, by_hand)), rtol=1e-10, atol=1e-12)


# --- re-planning a stack --------------------------------------------------------------------------
def test_a_stack_answers_which_set_runs_where_and_takes_a_new_plan():
    minishare.manual_seed(7)
    stack = encoder(Plan.build("cycle-rev", 4, 2), H, 2, I)
    assert [stack.set_at("ffn", i) for i in range(4)] == [stack.ffn_sets[k] for k in (0, 1, 1, 0)]
    old = [stack.set_at("attention", i) for i in range(4)]
    seen = []

    def make_set(component, j):                  # the stack as it was, every set made first
        seen.append((component, j, stack.plan.name))
        return stack.set_at(component, 3 - j)
    assert stack.replan(Plan.build("not-shared", 4), make_set) is stack
    assert seen == [("attention", j, "cycle-rev") for j in range(4)] + [("ffn", j, "cycle-rev") for j in range(4)]
    assert stack.plan.name == "not-shared" and len(stack.attention_sets) == 4
    assert [stack.set_at("attention", i) for i in range(4)] == old[::-1]
    with pytest.raises(InvalidValue, match="4 positions"):
        stack.replan(Plan.build("cycle", 6, 2), make_set)
    with pytest.raises(InvalidValue, match="cross_attention"):
        stack.set_at("cross_attention", 0)


def test_a_copied_module_replaces_its_children_and_leaves_the_original_alone():
    minishare.manual_seed(8)
    stack = encoder(Plan.build("all-shared", 2), H, 2, I)
    residual = stack.ffn_sets[0]
    clone = copy.copy(residual)
    clone.sublayer = LoRALinear.relaxing(Linear(H, H), 1)
    assert residual.sublayer is not clone.sublayer and type(residual.sublayer).__name__ == "FFN"
    assert clone.LayerNorm is residual.LayerNorm                          # the rest is shared
    names = {name for name, _ in clone.named_parameters()}
    assert "sublayer.lora_A" in names and "sublayer.ffn.weight" not in names
    assert "sublayer.ffn.weight" in {name for name, _ in residual.named_parameters()}


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
