"""The CuPy path without a GPU: under the strict backend (``minishare/_strict.py``), which fails
where CuPy fails, the breakages once found by reading the code against CuPy's documentation stay
fixed. Each test switches to the strict backend itself, so it runs in every suite.

CuPy's documented behaviour the stand-in copies: a generator's ``bit_generator.state`` is a method
(``cupy.random.XORWOW``), not a dict that could be saved or assigned; an array's ``.data`` is a
device pointer (``cupy.cuda.MemoryPointer``), not a host buffer.
"""
import numpy as np
import pytest

import minishare
from minishare import backend, checkpoint
from minishare.models import EncoderDecoderModel, TransformerConfig
from minishare.nn.attention import padding_mask
from minishare.tasks import Seq2SeqTask
from minishare.train import TrainConfig, Trainer

CONFIG = TrainConfig(steps=2, lr=1e-3, warmup_steps=0, eval_every=10, progress=False)


def tiny_run():
    """A tiny encoder-decoder with dropout on, after one training step."""
    task = Seq2SeqTask("reverse", batch_size=4, seed=1, n_eval=4)
    minishare.manual_seed(0)
    model = EncoderDecoderModel(TransformerConfig(
        vocab_size=task.task.vocab_size, hidden_size=8, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=16, max_position_embeddings=32, hidden_dropout_prob=0.1,
        attention_probs_dropout_prob=0.1))
    trainer = Trainer(model, task, CONFIG)
    trainer.train(until=1)
    return model, task, trainer


def test_a_gpu_run_saves_its_training_state(strict_backend, tmp_path):
    """Breakage 1: ``bit_generator.state`` is a method on CuPy; storing it made ``save`` raise."""
    model, _, trainer = tiny_run()
    path = str(tmp_path / "c.npz")
    checkpoint.save(model, path, trainer.state_dict())
    _, state = checkpoint.load(path, with_training_state=True)
    assert state["backend_rng"] == {"backend": "strict", "state": None}   # CuPy gives no state


def test_a_cpu_checkpoint_resumes_on_the_gpu_with_a_fresh_dropout_stream(tmp_path, capsys):
    """Breakage 2: restoring NumPy's generator state into CuPy's generator hid its ``state``
    method (CuPy refuses the assignment). Now the state is restored only on the backend that made
    it, and the run says in one line that its dropout stream is a fresh one."""
    backend.use("numpy")
    model, task, trainer = tiny_run()
    path = str(tmp_path / "c.npz")
    checkpoint.save(model, path, trainer.state_dict())

    backend.use("strict")
    loaded, state = checkpoint.load(path, with_training_state=True)
    resumed = Trainer(loaded, task, CONFIG)
    capsys.readouterr()
    resumed.load_state_dict(state)
    message = capsys.readouterr().err
    assert message.count("\n") == 1 and "fresh" in message and "numpy" in message, message
    resumed.train()                                    # dropout draws from the strict generator
    assert resumed.step == 2
    assert callable(backend.rng().bit_generator.state)


def test_the_numpy_generator_state_is_restored_on_numpy(tmp_path, capsys):
    """Where the backend gives a state, it is saved and restored (silently)."""
    backend.use("numpy")
    model, task, trainer = tiny_run()
    path = str(tmp_path / "c.npz")
    checkpoint.save(model, path, trainer.state_dict())
    expected = backend.to_numpy(backend.rng().random(4))
    minishare.manual_seed(99)
    loaded, state = checkpoint.load(path, with_training_state=True)
    capsys.readouterr()
    Trainer(loaded, task, CONFIG).load_state_dict(state)
    assert capsys.readouterr().err == ""
    np.testing.assert_array_equal(backend.to_numpy(backend.rng().random(4)), expected)


@pytest.mark.parametrize("kind", ["host", "device", "tensor"])
def test_padding_mask_of_a_device_array(kind, strict_backend):
    """Breakage 3: ``padding_mask`` read ``.data`` from whatever it got; a CuPy array's ``.data``
    is a device pointer, and converting it failed."""
    mask = np.array([[1, 1, 0], [1, 0, 0]])
    given = {"host": mask, "device": backend.asarray(mask), "tensor": minishare.tensor(mask)}[kind]
    out = padding_mask(given)
    assert out.shape == (2, 1, 1, 3) and backend.is_array(out)
    np.testing.assert_array_equal(backend.to_numpy(out)[:, 0, 0, :], mask == 1)


# --- the stand-in behaves like CuPy where the breakages came from -----------------------------------
def test_strict_data_is_a_device_pointer_and_there_is_no_ctypes(strict_backend):
    from minishare._strict import MemoryPointer, MixingError
    a = backend.asarray(np.arange(3.0))
    assert isinstance(a.data, MemoryPointer)
    with pytest.raises(MixingError):
        np.asarray(a.data)
    with pytest.raises(AttributeError, match="ctypes"):
        a.ctypes


def test_strict_generator_has_cupys_shape(strict_backend):
    """Methods only; ``bit_generator.state`` is a method and cannot be assigned."""
    generator = backend.xp.random.default_rng(3)
    assert callable(generator.bit_generator.state)
    with pytest.raises(AttributeError):
        generator.bit_generator.state = {}
    assert not hasattr(generator, "spawn")          # a NumPy-only method is not offered
    draws = generator.random((2, 3), dtype=np.float32)
    assert backend.is_array(draws) and draws.dtype == np.float32 and draws.shape == (2, 3)


def test_strict_integer_index_arrays_wrap_around_as_on_cupy(strict_backend):
    """CuPy's documented rule ("Differences between CuPy and NumPy"): out-of-range integer array
    indices wrap around, where NumPy raises IndexError. Hand-worked: in a 3-vector, 3 -> 0, 5 -> 2."""
    a = backend.asarray(np.array([10.0, 20.0, 30.0]))
    np.testing.assert_array_equal(backend.to_numpy(a[backend.asarray(np.array([1, 3, 5, -1]))]),
                                  [20.0, 10.0, 30.0, 30.0])
    m = backend.asarray(np.zeros((3, 2)))
    m[backend.asarray(np.array([4])), 1] = 7.0
    np.testing.assert_array_equal(backend.to_numpy(m)[:, 1], [0.0, 7.0, 0.0])
    t = backend.asarray(np.zeros(3))
    backend.xp.add.at(t, backend.asarray(np.array([0, 3, 4])), 1.0)
    np.testing.assert_array_equal(backend.to_numpy(t), [2.0, 1.0, 0.0])


def test_out_of_range_ids_get_minishares_error_not_numpys(strict_backend):
    """Embedding and cross-entropy check ids themselves: on CuPy a bad id would silently wrap."""
    import minishare.functional as F
    weight = minishare.tensor(np.ones((4, 2)), requires_grad=True)
    with pytest.raises(IndexError, match=r"embedding: ids must lie in \[0, 4\)"):
        F.embedding(minishare.tensor(np.array([1, 4])), weight)
    with pytest.raises(IndexError, match=r"cross_entropy: target ids must lie in \[0, 2\)"):
        F.cross_entropy(minishare.tensor(np.zeros((2, 2))), minishare.tensor(np.array([0, 2])))


def test_strict_refuses_python_lists_as_operands(strict_backend):
    a = backend.asarray(np.arange(3.0))
    for operation in (lambda: a + [1.0, 2.0, 3.0], lambda: [1.0, 2.0, 3.0] * a,
                      lambda: backend.xp.add(a, [1.0, 2.0, 3.0])):
        with pytest.raises(TypeError, match="Python lists"):
            operation()
    assert backend.xp.stack([a, a]).shape == (2, 3)    # sequences of arrays stay accepted


def test_strict_counts_host_syncs(strict_backend):
    """Each way of reading a device value on the host counts one; device-only work counts none."""
    a = backend.asarray(np.array([1.0, -2.0, 3.0]))
    start = backend.host_syncs()
    b = (a * 2).sum() + a.max()                     # stays on the device
    assert backend.host_syncs() == start
    float(b), int(b), bool(b), b.item(), a.tolist(), backend.to_numpy(a), a[a > 0], backend.xp.nonzero(a)
    assert backend.host_syncs() == start + 8


# --- one host sync per training step ------------------------------------------------------------------
@pytest.fixture(scope="module")
def pretraining_task():
    from minishare import data
    from minishare.tasks import PretrainingTask
    documents = data.grammar_corpus(48, seed=3)
    tokenizer = data.Tokenizer.train([s for d in documents for s in d], vocab_size=80)
    train_docs, eval_docs = data.split_documents(documents, eval_fraction=0.25, seed=0)
    return PretrainingTask(train_docs, eval_docs, tokenizer, "sop", batch_size=8, max_seq_length=32,
                           seed=2, n_eval_batches=1)


def tiny_albert(vocab_size, sharing):
    from minishare.models import AlbertConfig, AlbertForPreTraining
    minishare.manual_seed(0)
    return AlbertForPreTraining(AlbertConfig(
        vocab_size=vocab_size, embedding_size=16, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=64, max_position_embeddings=32, sharing=sharing,
        hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1))


@pytest.mark.parametrize("optimizer", ["adamw", "lamb"])
@pytest.mark.parametrize("sharing", ["all-shared", "not-shared"])
def test_a_training_step_syncs_with_the_host_once(sharing, optimizer, pretraining_task, strict_backend):
    """Each host sync drains a GPU's queue. A step reads its losses, metrics, gradient norm and
    input checks back in one transfer, before the optimizer step (it used to take 47 to 159)."""
    model = tiny_albert(pretraining_task.tokenizer.vocab_size, sharing)
    config = TrainConfig(steps=3, warmup_steps=1, optimizer=optimizer, grad_accum_steps=2,
                         eval_every=10, progress=False)
    trainer = Trainer(model, pretraining_task, config)
    for step in (1, 2):
        before = backend.host_syncs()
        trainer.train(until=step)
        assert backend.host_syncs() - before == 1, f"step {step}"
    row = trainer.history[-1]
    assert all(isinstance(row[k], float) for k in ("loss", "mlm_loss", "sop_loss", "grad_norm"))


class BadIdTask:
    """Wraps a task; from micro-batch ``at`` on, one input id is past the vocabulary."""

    def __init__(self, task, at):
        self.task, self.at = task, at

    def batch(self, index):
        batch = dict(self.task.batch(index))
        if index >= self.at:
            batch["input_ids"] = batch["input_ids"].copy()
            batch["input_ids"][0, 0] = self.task.tokenizer.vocab_size
        return batch

    def loss(self, model, batch):
        return self.task.loss(model, batch)


def test_a_bad_id_found_at_the_steps_sync_stops_before_the_optimizer(pretraining_task, strict_backend):
    """The embedding's id check is read with the step's one sync: the error is the embedding's own,
    and the weights are those of the last good step."""
    model = tiny_albert(pretraining_task.tokenizer.vocab_size, "all-shared")
    config = TrainConfig(steps=3, warmup_steps=0, eval_every=10, progress=False)
    trainer = Trainer(model, BadIdTask(pretraining_task, at=1), config)
    trainer.train(until=1)
    weights = {name: backend.to_numpy(p.data).copy() for name, p in model.named_parameters()}
    with pytest.raises(IndexError, match=r"embedding: ids must lie in \[0, 80\)"):
        trainer.train()
    assert trainer.step == 1
    for name, p in model.named_parameters():
        np.testing.assert_array_equal(backend.to_numpy(p.data), weights[name], err_msg=name)
        assert p.grad is None, name


@pytest.mark.gpu
def test_cupy_behaves_as_the_stand_in_assumes():
    """On a GPU: the CuPy facts the strict stand-in copies still hold for the installed CuPy."""
    backend.use("cupy")
    import cupy
    generator = backend.rng()
    assert callable(generator.bit_generator.state)
    a = backend.asarray(np.array([10.0, 20.0, 30.0]))
    assert isinstance(a.data, cupy.cuda.MemoryPointer)
    np.testing.assert_array_equal(backend.to_numpy(a[backend.asarray(np.array([1, 3]))]), [20.0, 10.0])
    with pytest.raises(TypeError):
        a + [1.0, 2.0, 3.0]
    t = backend.xp.zeros(3, dtype=np.float32)
    backend.xp.add.at(t, backend.asarray(np.array([0, 2, 0])), backend.asarray(np.ones(3, dtype=np.float32)))
    np.testing.assert_array_equal(backend.to_numpy(t), [2.0, 0.0, 1.0])
