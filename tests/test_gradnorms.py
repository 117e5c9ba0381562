"""Per-position gradient norms (``minishare.analysis.gradnorms``): the not-shared twin computes the
same loss, its per-position gradients sum to the shared model's gradient of each set, and the
norms equal norms taken by hand in NumPy."""
import numpy as np
import pytest

import minishare
from minishare import backend
from minishare.analysis import gradnorms
from minishare.models import AlbertConfig, AlbertForPreTraining


def config(**overrides):
    return AlbertConfig(**{**dict(vocab_size=23, embedding_size=8, hidden_size=16, num_hidden_layers=6,
                                  num_attention_heads=2, intermediate_size=32, max_position_embeddings=8),
                           **overrides})


def batch(seed=0, B=3, T=7):
    rng = np.random.default_rng(seed)
    ids = rng.integers(1, 23, (B, T))
    return dict(input_ids=ids, labels=np.where(rng.random((B, T)) < 0.4, ids, -100),
                sentence_order_label=rng.integers(0, 2, B))


def model_of(seed=0, **overrides):
    minishare.manual_seed(seed)
    model = AlbertForPreTraining(config(**overrides)).double()
    rng = np.random.default_rng(seed + 1)          # off the initialization: O(1) gradients everywhere
    for p in model.parameters():
        p.data = backend.asarray(p.numpy() + 0.1 * rng.standard_normal(p.shape))
    return model


def loss_fn(m):
    return m(**batch()).loss


@pytest.mark.parametrize("overrides", [dict(sharing="cycle-rev", num_unique_layers=3),
                                       dict(sharing="all-shared", norm_position="pre"),
                                       dict(sharing="shared-ffn")])
def test_uses_sum_to_the_shared_gradient(overrides):
    model = model_of(**overrides)
    twin = gradnorms.unshared_twin(model)
    assert loss_fn(twin).item() == pytest.approx(loss_fn(model).item(), rel=1e-12)
    loss_fn(model).backward()
    loss_fn(twin).backward()
    plan, N = model.config.plan(), model.config.num_hidden_layers
    encoder, twin_encoder = model.albert.encoder, twin.albert.encoder
    for component in ("attention", "ffn"):
        sets = getattr(encoder, f"{component}_sets")
        for s, shared in enumerate(sets):
            users = [i for i in range(N) if plan.index(component, i) == s]
            for (name, p), *copies in zip(shared.named_parameters(),
                                          *(getattr(twin_encoder, f"{component}_sets")[i].named_parameters()
                                            for i in users)):
                total = sum(backend.to_numpy(c[1].grad) for c in copies)
                np.testing.assert_allclose(total, backend.to_numpy(p.grad),
                                           rtol=1e-9, atol=1e-12, err_msg=f"{component} set {s} {name}")


def test_norms_of_a_not_shared_model_are_its_own_gradients():
    model = model_of(sharing="not-shared")
    got = gradnorms.position_gradient_norms(model, loss_fn)
    assert all(p.grad is None for p in model.parameters())         # the model itself is untouched
    loss_fn(model).backward()
    for i in range(6):
        att = [p.grad for p in model.albert.encoder.attention_sets[i].parameters()]
        ffn = [p.grad for p in model.albert.encoder.ffn_sets[i].parameters()]
        a = np.sqrt(sum(np.sum(backend.to_numpy(g) ** 2) for g in att))
        f = np.sqrt(sum(np.sum(backend.to_numpy(g) ** 2) for g in ffn))
        assert got["attention"][i] == pytest.approx(a, rel=1e-10)
        assert got["ffn"][i] == pytest.approx(f, rel=1e-10)
        assert got["layer"][i] == pytest.approx(np.hypot(a, f), rel=1e-10)


def test_measuring_draws_no_random_numbers():
    model = model_of(sharing="cycle", num_unique_layers=2)
    minishare.manual_seed(5)
    gradnorms.position_gradient_norms(model, loss_fn)
    after = minishare.random.host_generator().random()
    minishare.manual_seed(5)
    assert minishare.random.host_generator().random() == after


def test_refuses_a_model_without_a_plan():
    from minishare.nn import Linear
    with pytest.raises(TypeError, match="unshared_twin needs"):
        gradnorms.position_gradient_norms(Linear(2, 2), lambda m: None)
