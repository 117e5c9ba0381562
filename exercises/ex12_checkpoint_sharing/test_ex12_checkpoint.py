"""Cases of exercise 12 on a small looped model (one block used at several positions, a tied
output table): what the file holds (read back with NumPy), identity after loading, outputs, clear
refusals, and a save that fails halfway.

Each probe calls ``checkpoint_io`` (the student's module) in a new folder below the current one
(the grader's scratch folder), returns data and removes the folder. The folders' names say
nothing, and refusals are judged by the exception's type, never by words of its message. What
would answer a task stays on the grader's side: the files to load and the alias maps come from
``given``, and a saved file comes back as bytes, read by the judge."""
import encodings.cp437   # noqa: F401  (zipfile decodes .npz entry names with it: loaded before the
import io                # grader's audit hook, which refuses loading modules from then on)
import json
import os

import numpy as np

import minishare
from minishare.grader.cases import case, raises
from minishare.nn import Embedding, Linear, Module, ModuleList
from minishare.optim import SGD


class Looped(Module):
    """Embedding (V × E), N positions served by the blocks ``schedule`` names, a tied output."""

    def __init__(self, schedule, V=11, E=4, seed=0, tied=True):
        super().__init__()
        minishare.manual_seed(seed)
        self.embedding = Embedding(V, E)
        blocks = [Linear(E, E) for _ in range(max(schedule) + 1)]
        self.layers = ModuleList([blocks[s] for s in schedule])
        self.output = Linear(E, V)
        if tied:
            self.output.weight = self.embedding.weight

    def forward(self, ids):
        x = self.embedding(ids)
        for layer in self.layers:
            x = layer(x).tanh()
        return self.output(x)


IDS = np.array([[1, 5, 7]])
LOOPED_ALIASES = {"layers.2.weight": "layers.0.weight", "layers.2.bias": "layers.0.bias",
                  "output.weight": "embedding.weight"}          # of Looped([0, 1, 0]), by hand
_runs = [0]


def in_new_folder(probe):
    """``probe(folder)`` in a new empty folder below the current one, removed afterwards."""
    _runs[0] += 1
    folder = os.path.join(os.getcwd(), f"run-{os.getpid()}-{_runs[0]}")
    os.makedirs(folder)
    try:
        return probe(folder)
    finally:
        for directory, _, files in sorted(os.walk(folder), reverse=True):
            for name in files:
                os.remove(os.path.join(directory, name))
            os.rmdir(directory)


def put(path, data):
    """Write a file the grader made (bytes of ``given``) where the submission will load it."""
    with open(path, "wb") as f:
        f.write(data)


def contents(path):
    """The bytes of a file the submission wrote: the judge reads them."""
    with open(path, "rb") as f:
        return f.read()


def read_back(data):
    """A file's bytes as NumPy reads them: {entry: array}, and its name map decoded."""
    with np.load(io.BytesIO(data)) as archive:       # (allow_pickle is False by default)
        entries = dict(archive.items())
    names = json.loads(bytes(entries.pop("__names__")).decode()) if "__names__" in entries else None
    return entries, names


def looped_file(model):
    """The bytes of a ``Looped([0, 1, 0])``'s file in the exercise's format, spelt out by hand (so
    that loading is graded on a file the grader wrote, whatever ``save_shared`` does)."""
    tensors = [model.embedding.weight, model.layers[0].weight, model.layers[0].bias,
               model.layers[1].weight, model.layers[1].bias, model.output.bias]
    names = {"embedding.weight": 0, "layers.0.weight": 1, "layers.0.bias": 2, "layers.1.weight": 3,
             "layers.1.bias": 4, "layers.2.weight": 1, "layers.2.bias": 2, "output.weight": 0, "output.bias": 5}
    text = np.array(list(json.dumps(names).encode("utf-8")), dtype=np.uint8)
    file = io.BytesIO()
    np.savez(file, __names__=text, **{f"tensor/{k}": t.numpy() for k, t in enumerate(tensors)})
    return file.getvalue()


@case("ex12_task1")
def test_aliases_of_a_looped_model(checkpoint_io):
    return [checkpoint_io.aliases(Looped([0, 1, 0])), checkpoint_io.aliases(Linear(2, 2))]


@test_aliases_of_a_looped_model.judge
def _(out, ref):
    assert out[0] == LOOPED_ALIASES, out[0]
    assert out[1] == {}, out[1]


@case("ex12_task1")
def test_file_holds_each_distinct_tensor_once(checkpoint_io):
    def probe(folder):
        model = Looped([0, 1, 0, 1])
        checkpoint_io.save_shared(model, os.path.join(folder, "m.npz"))
        values = {name: p.numpy() for name, p in model.named_parameters(remove_duplicate=False)}
        return {"file": contents(os.path.join(folder, "m.npz")), "values": values}
    return in_new_folder(probe)


@test_file_holds_each_distinct_tensor_once.judge
def _(out, ref):
    entries, names = read_back(out["file"])
    model = Looped([0, 1, 0, 1])
    firsts = [name for name, _ in model.named_parameters()]      # table, 2 blocks' weight and bias, output bias
    every = [name for name, _ in model.named_parameters(remove_duplicate=False)]
    assert sorted(entries) == sorted(f"tensor/{k}" for k in range(len(firsts))), sorted(entries)
    assert names is not None and sorted(names) == sorted(every), names
    assert [names[name] for name in firsts] == list(range(len(firsts))), names
    assert names["layers.3.weight"] == names["layers.1.weight"], names
    assert names["output.weight"] == names["embedding.weight"], names
    for name in every:
        np.testing.assert_array_equal(entries[f"tensor/{names[name]}"], out["values"][name], err_msg=name)


@case("ex12_task2")
def test_round_trip_keeps_values_and_sharing(checkpoint_io, given):
    def probe(folder):
        trained = Looped([0, 1, 0], seed=1)
        put(os.path.join(folder, "m.npz"), given["file"])
        fresh = Looped([0, 1, 0], seed=2)
        before = fresh(IDS).numpy()
        checkpoint_io.load_shared(fresh, os.path.join(folder, "m.npz"))
        return {"trained": trained(IDS).numpy(), "before": before, "after": fresh(IDS).numpy(),
                "shared": [fresh.layers[0].weight is fresh.layers[2].weight,
                           fresh.output.weight is fresh.embedding.weight]}
    return in_new_folder(probe)


@test_round_trip_keeps_values_and_sharing.given
def _(rng):
    return {"file": looped_file(Looped([0, 1, 0], seed=1))}


@test_round_trip_keeps_values_and_sharing.judge
def _(out, ref):
    assert not np.allclose(out["before"], out["trained"])
    np.testing.assert_allclose(out["after"], out["trained"], rtol=1e-6)
    assert out["shared"] == [True, True], "loading broke the sharing"


@case("ex12_task3")
def test_retie_restores_sharing_lost_to_copies(checkpoint_io, given):
    shared, copies = Looped([0, 1, 0]), Looped([0, 1, 2], tied=False)     # copies, untied as well
    saved = checkpoint_io.retie(copies, given["aliases"])
    return {"saved": saved, "tied": copies.layers[2].weight is copies.layers[0].weight,
            "counts": [minishare.count_parameters(copies), minishare.count_parameters(shared)]}


@test_retie_restores_sharing_lost_to_copies.given
def _(rng):
    return {"aliases": LOOPED_ALIASES}              # task 1's answer: never in the submission's process


@test_retie_restores_sharing_lost_to_copies.judge
def _(out, ref):
    assert out["saved"] == 4 * 4 + 4 + 11 * 4, out["saved"]
    assert out["tied"], "layers.2.weight must be layers.0.weight itself"
    assert out["counts"][0] == out["counts"][1], out["counts"]


### BEGIN HIDDEN TESTS
def file_of(model):
    """The bytes of any model's file in the exercise's format, written by the grader."""
    k_of, names = {}, {}
    for name, p in model.named_parameters(remove_duplicate=False):
        names[name] = k_of.setdefault(id(p), len(k_of))
    tensors = {f"tensor/{k}": p.numpy() for k, p in enumerate(model.parameters())}
    file = io.BytesIO()
    np.savez(file, __names__=np.array(list(json.dumps(names).encode("utf-8")), dtype=np.uint8), **tensors)
    return file.getvalue()


@case("ex12_task1")
def test_saving_is_atomic_and_leaves_no_temporary(checkpoint_io):
    def probe(folder):
        checkpoint_io.save_shared(Looped([0, 0]), os.path.join(folder, "m.npz"))
        checkpoint_io.save_shared(Looped([0, 0], seed=3), os.path.join(folder, "m.npz"))
        return {"files": sorted(os.listdir(folder)), "file": contents(os.path.join(folder, "m.npz")),
                "expected": Looped([0, 0], seed=3).embedding.weight.numpy()}
    return in_new_folder(probe)


@test_saving_is_atomic_and_leaves_no_temporary.judge
def _(out, ref):
    assert out["files"] == ["m.npz"], out["files"]
    entries, _ = read_back(out["file"])
    np.testing.assert_array_equal(entries.get("tensor/0"), out["expected"])   # the second save replaced the first


class Unserializable:
    """An object NumPy can only store by pickling it, and whose pickling fails."""

    def __reduce__(self):
        raise RuntimeError("this value cannot be written")


@case("ex12_task1")
def test_a_save_that_fails_halfway_leaves_the_old_file(checkpoint_io):
    """The last tensor of the second model cannot be written: the save raises after the first
    tensors were written. The file saved before must survive byte for byte, and nothing else
    may be left in the folder."""
    def probe(folder):
        path = os.path.join(folder, "m.npz")
        checkpoint_io.save_shared(Looped([0, 1]), path)
        before = contents(path)
        broken = Looped([0, 1], seed=4)
        broken.output.bias.data = np.array([Unserializable() for _ in range(11)], dtype=object)
        failed = raises(Exception, checkpoint_io.save_shared, broken, path)
        return {"raised": failed, "intact": contents(path) == before, "files": sorted(os.listdir(folder))}
    return in_new_folder(probe)


@test_a_save_that_fails_halfway_leaves_the_old_file.judge
def _(out, ref):
    assert out["raised"], "the failed save must raise its error, not hide it"
    assert out["intact"], "a failed save destroyed the file that was there (write atomically)"
    assert out["files"] == ["m.npz"], f"a failed save left {out['files']} (a partial temporary file?)"


@case("ex12_task2")
def test_a_step_after_loading_moves_every_use(checkpoint_io, given):
    def probe(folder):
        put(os.path.join(folder, "m.npz"), given["file"])
        model = Looped([0, 1, 0], seed=5)
        objects = [id(p) for _, p in model.named_parameters(remove_duplicate=False)]
        returned = checkpoint_io.load_shared(model, os.path.join(folder, "m.npz"))
        kept = objects == [id(p) for _, p in model.named_parameters(remove_duplicate=False)]
        model(IDS).sum().backward()
        SGD(model.parameters(), lr=0.5).step()
        return {"returned the model": returned is model, "same objects": kept,
                "shared after a step": model.layers[0].weight is model.layers[2].weight,
                "dtypes": sorted({str(p.dtype) for p in model.parameters()})}
    return in_new_folder(probe)


@test_a_step_after_loading_moves_every_use.given
def _(rng):
    return {"file": file_of(Looped([0, 1, 0], seed=4))}


@test_a_step_after_loading_moves_every_use.judge
def _(out, ref):
    assert out["returned the model"] and out["same objects"] and out["shared after a step"], out
    assert out["dtypes"] == ref["dtypes"], out["dtypes"]


@case("ex12_task2")
def test_a_float64_file_keeps_the_models_dtype(checkpoint_io, given):
    def probe(folder):
        put(os.path.join(folder, "m.npz"), given["file"])
        model = checkpoint_io.load_shared(Looped([0, 1, 0], seed=7), os.path.join(folder, "m.npz"))
        return {"dtypes": sorted({str(p.dtype) for p in model.parameters()}),
                "table": model.embedding.weight.numpy().astype(np.float64)}
    return in_new_folder(probe)


@test_a_float64_file_keeps_the_models_dtype.given
def _(rng):
    saved = Looped([0, 1, 0], seed=6).double()
    return {"file": file_of(saved), "table": saved.embedding.weight.numpy()}


@test_a_float64_file_keeps_the_models_dtype.judge
def _(out, ref, given):
    assert out["dtypes"] == ref["dtypes"] == ["float32"], out["dtypes"]
    np.testing.assert_allclose(out["table"], given["table"], rtol=1e-6)


@case("ex12_task2")
def test_loading_into_other_sharing_is_refused(checkpoint_io, given):
    """Refusals judged by the exception's type: ValueError. [0, 1, 0] and [0, 1, 1] have the same
    names and shapes and differ in sharing only."""
    def probe(folder):
        looped, unshared = os.path.join(folder, "a.npz"), os.path.join(folder, "b.npz")
        put(looped, given["looped"])
        put(unshared, given["unshared"])
        return {"other block shared": raises(ValueError, checkpoint_io.load_shared, Looped([0, 1, 1]), looped),
                "not shared": raises(ValueError, checkpoint_io.load_shared, Looped([0, 1, 2]), looped),
                "shared, file not": raises(ValueError, checkpoint_io.load_shared, Looped([0, 1, 0]), unshared),
                "untied": raises(ValueError, checkpoint_io.load_shared, Looped([0, 1, 0], tied=False), looped),
                "shape": raises(ValueError, checkpoint_io.load_shared, Looped([0, 1, 0], E=5), looped),
                "same sharing": raises(ValueError, checkpoint_io.load_shared, Looped([0, 1, 0], seed=8), looped)}
    return in_new_folder(probe)


@test_loading_into_other_sharing_is_refused.given
def _(rng):
    return {"looped": file_of(Looped([0, 1, 0])), "unshared": file_of(Looped([0, 1, 2]))}    # E = 4, not 5


@test_loading_into_other_sharing_is_refused.judge
def _(out, ref):
    assert out == {"other block shared": True, "not shared": True, "shared, file not": True, "untied": True,
                   "shape": True, "same sharing": False}, out


@case("ex12_task3")
def test_retie_then_values_follow_the_first_name(checkpoint_io, given):
    copies = Looped([0, 1, 2], seed=7)
    checkpoint_io.retie(copies, given["aliases"])
    copies.layers[0].bias.data = copies.layers[0].bias.data + 1.0
    return {"first": copies.layers[0].bias.numpy(), "alias": copies.layers[2].bias.numpy(),
            "again": checkpoint_io.retie(copies, given["aliases"])}


@test_retie_then_values_follow_the_first_name.given
def _(rng):
    return {"aliases": LOOPED_ALIASES}


@test_retie_then_values_follow_the_first_name.judge
def _(out, ref):
    np.testing.assert_array_equal(out["alias"], out["first"])
    assert out["again"] == 0, out["again"]
### END HIDDEN TESTS
