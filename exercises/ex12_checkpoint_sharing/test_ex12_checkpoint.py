"""Tests of exercise 12 on a small looped model (one block used at several positions, a tied
output table): what the file holds (read back with NumPy), identity after loading, outputs, and
clear refusals."""
import json

import numpy as np
import pytest

import minishare
from minishare.nn import Embedding, Linear, Module, ModuleList
from minishare.optim import SGD
from checkpoint_io import aliases, load_shared, retie, save_shared


class Looped(Module):
    """Embedding (V × E), N positions served by the blocks ``schedule`` names, a tied output."""

    def __init__(self, schedule, V=11, E=4, seed=0):
        super().__init__()
        minishare.manual_seed(seed)
        self.embedding = Embedding(V, E)
        blocks = [Linear(E, E) for _ in range(max(schedule) + 1)]
        self.layers = ModuleList([blocks[s] for s in schedule])
        self.output = Linear(E, V)
        self.output.weight = self.embedding.weight

    def forward(self, ids):
        x = self.embedding(ids)
        for layer in self.layers:
            x = layer(x).tanh()
        return self.output(x)


IDS = np.array([[1, 5, 7]])


@pytest.mark.ex12_task1
def test_aliases_of_a_looped_model():
    found = aliases(Looped([0, 1, 0]))
    assert found == {"layers.2.weight": "layers.0.weight", "layers.2.bias": "layers.0.bias",
                     "output.weight": "embedding.weight"}
    assert aliases(Linear(2, 2)) == {}


@pytest.mark.ex12_task1
def test_file_holds_each_distinct_tensor_once(tmp_path):
    model = Looped([0, 1, 0, 1])
    save_shared(model, tmp_path / "m.npz")
    with np.load(tmp_path / "m.npz", allow_pickle=False) as npz:
        params = [k for k in npz.files if k.startswith("param/")]
        stored_aliases = json.loads(npz["__aliases__"].tobytes().decode())
    assert len(params) == len(list(model.parameters())) == 1 + 2 * 2 + 1    # table, 2 blocks, output bias
    assert stored_aliases["layers.3.weight"] == "layers.1.weight"


@pytest.mark.ex12_task2
def test_round_trip_keeps_values_and_sharing(tmp_path):
    trained = Looped([0, 1, 0], seed=1)
    save_shared(trained, tmp_path / "m.npz")
    fresh = Looped([0, 1, 0], seed=2)
    assert not np.allclose(fresh(IDS).numpy(), trained(IDS).numpy())
    load_shared(fresh, tmp_path / "m.npz")
    np.testing.assert_allclose(fresh(IDS).numpy(), trained(IDS).numpy())
    assert fresh.layers[0].weight is fresh.layers[2].weight and fresh.output.weight is fresh.embedding.weight


@pytest.mark.ex12_task3
def test_retie_restores_sharing_lost_to_copies():
    shared, copies = Looped([0, 1, 0]), Looped([0, 1, 2])
    copies.output.weight = Looped([0]).output.weight                    # untied as well
    saved = retie(copies, aliases(shared))
    assert saved == 4 * 4 + 4 + 11 * 4
    assert copies.layers[2].weight is copies.layers[0].weight
    assert minishare.count_parameters(copies) == minishare.count_parameters(shared)


### BEGIN HIDDEN TESTS
@pytest.mark.ex12_task1
def test_saving_is_atomic_and_leaves_no_temporary(tmp_path):
    save_shared(Looped([0, 0]), tmp_path / "m.npz")
    save_shared(Looped([0, 0], seed=3), tmp_path / "m.npz")
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]


@pytest.mark.ex12_task2
def test_a_step_after_loading_moves_every_use(tmp_path):
    save_shared(Looped([0, 1, 0], seed=4), tmp_path / "m.npz")
    model = load_shared(Looped([0, 1, 0], seed=5), tmp_path / "m.npz")
    model(IDS).sum().backward()
    SGD(model.parameters(), lr=0.5).step()
    assert model.layers[0].weight is model.layers[2].weight


@pytest.mark.ex12_task2
def test_loading_into_other_sharing_is_refused(tmp_path):
    save_shared(Looped([0, 1, 0]), tmp_path / "m.npz")
    with pytest.raises(ValueError, match="shar"):
        load_shared(Looped([0, 1, 2]), tmp_path / "m.npz")
    save_shared(Looped([0, 1, 0], E=4), tmp_path / "e.npz")
    with pytest.raises(ValueError, match="shape"):
        load_shared(Looped([0, 1, 0], E=5), tmp_path / "e.npz")


@pytest.mark.ex12_task3
def test_retie_then_values_follow_the_first_name():
    shared, copies = Looped([0, 1, 0], seed=6), Looped([0, 1, 2], seed=7)
    retie(copies, aliases(shared))
    copies.layers[0].bias.data = copies.layers[0].bias.data + 1.0
    np.testing.assert_allclose(copies.layers[2].bias.numpy(), copies.layers[0].bias.numpy())
    assert retie(copies, aliases(shared)) == 0
### END HIDDEN TESTS
