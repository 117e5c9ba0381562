"""One training loop for every model and task.

    trainer = Trainer(model, task, TrainConfig(steps=300, lr=1e-3))
    history = trainer.train()          # a list of dicts, one per step (eval_* keys when evaluated)

Each step (``Trainer.train_step``): for each of ``grad_accum_steps`` micro-batches,
loss / grad_accum_steps is back-propagated (gradients add up in ``.grad``); then the global
gradient norm is clipped, the optimizer steps each distinct parameter once, the schedule advances,
gradients are zeroed. Every
``eval_every`` steps the task evaluates on held-out data. A NaN or infinite loss stops training
with an error naming the step and the last finite loss, before the optimizer touches the weights;
so does a non-finite gradient norm. ``train(stop=...)`` ends early, between two steps, when asked:
``stop_requests()`` turns Ctrl-C (SIGINT) and SIGTERM into such a request.

With ``Trainer(..., data_parallel=minishare.distributed.DataParallel())`` (under ``mpiexec``) each
rank computes the loss of its share of the global batch, weighted so that the ranks' sum is the
global batch's loss, and one Allreduce sums the gradients before the clipping; rank 0 alone
evaluates. The Allreduce is a second host transfer per step (MPI sends host memory).

A run is reproducible bit for bit on one CPU machine: seed initialization and dropout with
``minishare.manual_seed`` before building the model (``run_training`` does), and the task's batches
are a pure function of (the task's seed, step). Resuming
from ``minishare.save(model, path, trainer.state_dict())`` continues exactly as the uninterrupted
run would have. On a GPU neither holds bit for bit: scatter-adds use atomics (see
``minishare.backend``), and CuPy's dropout generator has no state to save, so a resumed run draws
fresh masks.
"""
import csv
import dataclasses
import contextlib
import json
import math
import signal
import sys
import threading
import time

import numpy   # only for numpy.errstate: the step's math runs on minishare.backend

from minishare import backend, optim, safeio
from minishare import random as ms_random
from minishare.errors import InvalidValue
from minishare.files import atomic_write
from minishare.nn.utils import clip_grad_norm_
from minishare.progress import bar as progress_bar
from minishare.tensor import Tensor


OPTIMIZERS = {"adamw": optim.AdamW, "lamb": optim.LAMB}        # LAMB: ALBERT's
SCHEDULES = {"linear": optim.linear_warmup_decay, "cosine": optim.cosine_warmup_decay}   # after warm-up


@dataclasses.dataclass
class TrainConfig:
    """The training loop's settings, and the one place their defaults are set: ``run_training``
    and ``python -m minishare train`` take theirs from here (``TrainConfig.lr``, ...)."""
    steps: int = 300
    lr: float = 1e-3
    optimizer: str = "adamw"            # a name of OPTIMIZERS
    weight_decay: float = 0.01
    warmup_steps: object = None         # None: default_warmup(steps), 30 of the default 300 steps
    schedule: str = "linear"            # a name of SCHEDULES: the decay after warm-up
    max_grad_norm: float = 1.0
    grad_accum_steps: int = 1
    eval_every: int = 50
    progress: bool = True

    @staticmethod
    def default_warmup(steps):
        """The warm-up when none is given: a tenth of the steps, at least one."""
        return max(1, steps // 10)

    def __post_init__(self):
        for name, known in (("optimizer", OPTIMIZERS), ("schedule", SCHEDULES)):
            value = getattr(self, name)
            if not isinstance(value, str) or value not in known:
                raise InvalidValue(f"{name} must be one of {', '.join(map(repr, known))}, got {value!r}")
        for name in ("steps", "grad_accum_steps", "eval_every"):
            if getattr(self, name) < 1:
                raise InvalidValue(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.warmup_steps is None:
            self.warmup_steps = self.default_warmup(self.steps)
        if not 0 <= self.warmup_steps <= self.steps:
            raise InvalidValue(f"warmup_steps must lie in [0, steps={self.steps}], got {self.warmup_steps}")


def parameter_groups(model, weight_decay):
    """BERT's convention: weight decay on matrices, none on biases and LayerNorm parameters."""
    decay = [p for p in model.parameters() if p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


class Trainer:
    def __init__(self, model, task, config=None, data_parallel=None):
        self.model, self.task, self.config = model, task, config or TrainConfig()
        self.data_parallel = data_parallel      # a minishare.distributed.DataParallel, or None
        c = self.config
        self.optimizer = OPTIMIZERS[c.optimizer](parameter_groups(model, c.weight_decay), lr=c.lr)
        self.scheduler = SCHEDULES[c.schedule](self.optimizer, c.warmup_steps, c.steps)
        self.step = 0
        self.history = []
        self.elapsed = 0.0              # training wall-clock seconds, evaluation excluded

    def train(self, until=None, stop=None, after_step=None):
        """Train to step ``until`` (default: ``config.steps``), or until ``stop()`` (checked after
        each step) is true; ``after_step()``, if given, runs after each step (to save a
        checkpoint, say). Returns the history."""
        c, until = self.config, min(until or self.config.steps, self.config.steps)
        bar = progress_bar(until - self.step, c.progress, unit="step")
        self.model.train()
        while self.step < until and not (stop and stop()):
            lr = self.scheduler.get_last_lr()[0]           # the rate this step trains with
            start = time.perf_counter()
            loss, metrics = self.train_step()
            step_time = time.perf_counter() - start
            self.elapsed += step_time
            row = {"step": self.step, "loss": loss, "lr": lr,
                   "step_time": step_time, "wall_clock": self.elapsed, **metrics}
            evaluates = self.data_parallel is None or self.data_parallel.rank == 0
            if evaluates and (self.step % c.eval_every == 0 or self.step == c.steps):
                self.model.eval()
                row.update({f"eval_{k}": v for k, v in self.task.evaluate(self.model).items()})
                self.model.train()
            self.history.append(row)
            if bar is not None:
                bar.set_postfix(loss=f"{loss:.3f}", steps_per_s=f"{1 / step_time:.1f}")
                bar.update(1)
            if after_step is not None:
                after_step()
        if bar is not None:
            bar.close()
        return self.history

    def train_step(self):
        """One update of the weights. Each micro-batch's loss is back-propagated, so a tensor's
        ``.grad`` sums its gradients over the micro-batches and, when it is shared, over every
        position that used it (chapter 1's sum rule); the global gradient is clipped; then the
        optimizer updates each distinct tensor once (``model.parameters()`` yields a shared tensor
        once, so it has one gradient and one optimizer state). Returns (loss, metrics)."""
        c = self.config
        # NumPy's floating-point warnings are off: a NaN or inf reaches the loss or the gradient
        # norm, which the step reads and reports itself (naming the step), as it would on a GPU.
        with backend.deferred_checks() as checks, numpy.errstate(all="ignore"):
            names, values = [], []              # read back together, after the backward passes
            for micro in range(c.grad_accum_steps):
                loss, metrics = self._loss(micro)
                (loss * (1.0 / c.grad_accum_steps)).backward()        # gradients add up in .grad
                names += ["loss", *metrics]
                values += [loss, *metrics.values()]
            if self.data_parallel is not None:  # the global gradient and losses, before clipping
                values = self.data_parallel.all_reduce(self.model.parameters(), values)
            grad_norm = clip_grad_norm_(self.model.parameters(), c.max_grad_norm)
        loss, metrics = self._read_back(names, values, grad_norm, checks)    # stops on NaN or inf
        self.optimizer.step()             # each distinct tensor once: one gradient, one state
        self.scheduler.step()
        self.optimizer.zero_grad()
        self.step += 1
        return loss, metrics

    def _loss(self, micro):
        """The loss and metrics of micro-batch ``micro`` of this step: under data parallelism this
        rank's share of the batch, weighted so that the ranks' sum is the whole batch's loss."""
        index = self.step * self.config.grad_accum_steps + micro
        batch = self.task.batch(index)
        if self.data_parallel is None:
            return self.task.loss(self.model, batch)
        return self.data_parallel.loss(self.task, self.model, batch, index)

    def _read_back(self, names, values, grad_norm, checks):
        """The step's one host sync: the losses and metrics (``values``, named by ``names``), the
        gradient norm and the deferred input ``checks`` read together. A failed check raises its
        error, a NaN or infinite loss or gradient norm stops training, before the optimizer
        touches the weights. Returns (mean loss, mean metrics with ``grad_norm``)."""
        c = self.config
        read = _to_host(values + [grad_norm] + [bad for bad, _ in checks])
        for (_, error), bad in zip(checks, read[len(values) + 1:]):
            if bad:
                self.optimizer.zero_grad()
                raise error()
        total, metrics = 0.0, {}
        for name, value in zip(names, read):
            if name == "loss":
                if not math.isfinite(value):
                    self._diverged(f"the loss is {value}")
                total += value / c.grad_accum_steps
            else:
                metrics[name] = metrics.get(name, 0.0) + value / c.grad_accum_steps
        metrics["grad_norm"] = read[len(values)]
        if not math.isfinite(metrics["grad_norm"]):
            self._diverged(f"the gradient norm is {metrics['grad_norm']}")
        return total, metrics

    def _diverged(self, what):
        """Stop before the optimizer step, so the weights stay those of the last good step."""
        self.optimizer.zero_grad()
        last = (f" (last finite loss {self.history[-1]['loss']:.6g} at step {self.step})"
                if self.history else "")
        raise FloatingPointError(f"training diverged: {what} at step {self.step + 1}{last}")

    # --- exact resumption ---------------------------------------------------------------------
    def state_dict(self):
        """Everything besides the weights that the next step depends on."""
        return {"step": self.step, "elapsed": self.elapsed, "history": self.history,
                "optimizer": self.optimizer.state_dict(), "scheduler": self.scheduler.state_dict(),
                "host_rng": ms_random.host_generator().bit_generator.state,
                "backend_rng": _backend_rng_state()}

    def load_state_dict(self, state):
        step = safeio.integer(state["step"], "the training state's step", low=0)
        if not isinstance(state["history"], list) or len(state["history"]) != step:
            raise InvalidValue(f"the training state is at step {step} but its history has "
                               f"{len(state['history']) if isinstance(state['history'], list) else 'no'} "
                               "rows, one per step (edited or mismatched state)")
        self.step, self.elapsed = step, float(state["elapsed"])
        self.history = [dict(row) for row in state["history"]]
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        ms_random.host_generator().bit_generator.state = state["host_rng"]
        _restore_backend_rng(state["backend_rng"])


class StopRequest:
    """Set by a signal; ``bool(request)`` says whether one arrived, ``.signal`` names it."""
    signal = None

    def __bool__(self):
        return self.signal is not None


@contextlib.contextmanager
def stop_requests(signals=(signal.SIGINT, signal.SIGTERM)):
    """Inside the block the first SIGINT (Ctrl-C) or SIGTERM only records a request, so the step
    under way and the save after it finish; a second one interrupts at once (KeyboardInterrupt).
    Python delivers signals to the main thread only: elsewhere nothing is installed."""
    request = StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield request
        return

    def handler(signum, frame):
        if request:
            raise KeyboardInterrupt
        request.signal = signal.Signals(signum)
    previous = {s: signal.signal(s, handler) for s in signals}
    try:
        yield request
    finally:
        for s, old in previous.items():
            signal.signal(s, old)


def _to_host(values):
    """Python floats of ``values`` (0-d Tensors, device arrays, numbers) in one device -> host copy:
    one host sync, however many values."""
    arrays = [v.data if isinstance(v, Tensor) else v for v in values]
    stacked = backend.xp.stack([backend.asarray(a, dtype=backend.xp.float64) for a in arrays])
    return backend.to_numpy(stacked).tolist()


def _backend_rng_state():
    """The dropout generator's state as the backend gives it, tagged with the backend's name.
    NumPy's ``bit_generator.state`` is a dict; CuPy's is a method (the address of cuRAND's
    device state), which cannot be stored: then only the name is kept."""
    state = backend.rng().bit_generator.state
    return {"backend": backend.name, "state": state if isinstance(state, dict) else None}


def _restore_backend_rng(saved):
    """Restore the dropout generator where the same backend saved a state; otherwise (a CPU
    checkpoint resumed on a GPU, or a backend that gives no state) keep the current stream."""
    if saved is not None and saved["backend"] == backend.name and saved["state"] is not None:
        backend.rng().bit_generator.state = saved["state"]
        return
    made_by = "no" if saved is None else f"the {saved['backend']} backend's"
    print(f"minishare: {made_by} dropout generator state cannot be restored on the {backend.name} "
          "backend; the run continues with a fresh device stream", file=sys.stderr)



def save_history(history, path):
    """Write the history as CSV (``.csv``) or JSON (any other suffix), atomically."""
    with atomic_write(path, "w", newline="") as f:
        if path.endswith(".csv"):
            columns = list(dict.fromkeys(k for row in history for k in row))
            writer = csv.DictWriter(f, fieldnames=columns)
            writer.writeheader()
            writer.writerows(history)
        else:
            json.dump(history, f, indent=1)
    return path
