"""The code track's probes: all that runs beside a submission's ``model.py`` (``golf_code``).

Each probe builds the submission's model (``build(vocab_size, seq_len)``, seeded by the recipe)
and returns data only. None of them decides anything: the grader counts the bytes from the
shapes, measures the CPU time of the training worker itself, quantizes the returned weights and
scores the returned log-probabilities against targets this process never sees.

* ``golf_shapes``: the shapes of the model's distinct parameters, before any training.
* ``golf_train``: the course's ``Trainer`` on the grader's training stream (the LM task's windows,
  as ``tasks.LanguageModelingTask`` draws them), stopped between steps at the CPU limit; returns
  the trained weights as float32 bytes, one string per distinct parameter.
* ``golf_predict``: the stored weights (the grader's quantized copies) loaded into a fresh model,
  which gives the log-probabilities of the next token after each context: the last position of
  ``model(contexts)``, a (B, V) array.
"""
import numpy as np

from minishare import backend, nn
from minishare import functional as F
from minishare import random as ms_random
from minishare.golf.run import train_within
from minishare.grader.cases import case
from minishare.tensor import Tensor, no_grad
from minishare.train import TrainConfig, Trainer


def built(model, given):
    """The submission's model, built from the recipe's seed."""
    ms_random.manual_seed(given["seed"])
    net = model.build(given["vocab_size"], given["seq_len"])
    if not isinstance(net, nn.Module):
        raise TypeError(f"model.build(vocab_size, seq_len) must return a minishare.nn.Module, got "
                        f"{type(net).__name__}")
    return net


def logits_of(net, ids):
    """``net(ids)`` as logits (B, T, V): a Tensor, or an output with ``.logits`` (``DecoderLM``'s)."""
    out = net(ids)
    out = getattr(out, "logits", out)
    if not isinstance(out, Tensor) or out.ndim != 3 or tuple(out.shape[:2]) != ids.shape:
        raise TypeError(f"model(ids) of ids {ids.shape} must give logits (B, T, V) as a Tensor, got "
                        f"{getattr(out, 'shape', type(out).__name__)}")
    return out


class Windows:
    """The language-modelling task on the grader's training stream, for ``Trainer``."""

    def __init__(self, ids, batch_size, seq_len, seed):
        self.ids, self.batch_size, self.seq_len, self.seed = ids, batch_size, seq_len, seed

    def batch(self, index):
        rng = np.random.default_rng(self.seed * 1_000_003 + index + 1)     # LanguageModelingTask's draw
        starts = rng.integers(0, len(self.ids) - self.seq_len, self.batch_size)
        return {"input_ids": np.stack([self.ids[s:s + self.seq_len] for s in starts])}

    def loss(self, model, batch):
        ids = batch["input_ids"]                                            # (B, T)
        logits = logits_of(model, ids)                                      # (B, T, V)
        B, T, V = logits.shape
        return F.cross_entropy(logits[:, :-1].reshape(B * (T - 1), V), ids[:, 1:].reshape(-1)), {}

    def loss_counts(self, batch):
        return {"loss": len(batch["input_ids"])}


@case("golf_code", timeout=60.0)
def golf_shapes(model, given):
    return {"shapes": [list(p.shape) for p in built(model, given).parameters()]}


@case("golf_code", timeout=60.0)
def golf_train(model, given):
    net = built(model, given)
    ids = np.frombuffer(given["train_ids"], dtype="<u2").astype(np.int64)
    task = Windows(ids, given["batch_size"], given["seq_len"], given["seed"])
    trainer = Trainer(net, task, TrainConfig(**given["train"]))
    _, stopped = train_within(trainer, given["cpu_seconds"])
    arrays = [np.ascontiguousarray(backend.to_numpy(p.data), dtype="<f4").tobytes() for p in net.parameters()]
    return {"arrays": arrays, "steps_done": trainer.step, "stopped_at_limit": stopped}


@case("golf_code", timeout=60.0)
def golf_predict(model, given):
    net = built(model, given)
    params = list(net.parameters())
    if len(params) != len(given["shapes"]):
        raise ValueError(f"the model has {len(params)} distinct parameters; it stored {len(given['shapes'])}")
    for p, stored, shape in zip(params, given["arrays"], given["shapes"]):
        p.data = backend.asarray(np.frombuffer(stored, dtype="<f4").reshape(shape).astype(p.data.dtype))
    net.eval()
    with no_grad():
        logits = backend.to_numpy(logits_of(net, given["contexts"]).data)[:, -1].astype(np.float64)   # (B, V)
    top = logits.max(axis=-1, keepdims=True)
    log_p = logits - top - np.log(np.exp(logits - top).sum(axis=-1, keepdims=True))
    return {"log_p": np.ascontiguousarray(log_p, dtype="<f4").tobytes()}
