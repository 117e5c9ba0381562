"""Learning-rate schedules: ``LambdaLR`` (PyTorch's) and the two warm-up schedules Transformers
train with, linear decay (BERT, ALBERT) and cosine decay.

Call ``scheduler.step()`` once after each ``optimizer.step()``::

    optimizer = optim.LAMB(model.parameters(), lr=1.76e-3)
    scheduler = optim.linear_warmup_decay(optimizer, num_warmup_steps=3125, num_training_steps=125_000)
    for batch in batches:
        loss = model(batch); loss.backward()
        optimizer.step(); optimizer.zero_grad(); scheduler.step()
"""
import math
import numbers

from minishare.checks import is_int
from minishare.optim.optimizer import Optimizer


class LambdaLR:
    """Set each group's learning rate to its initial one times a factor of the step count:

        lr_i(t) = base_lr_i · lr_lambda(t),    t = the number of ``step()`` calls so far

    PyTorch's semantics: building the scheduler records base_lr_i (each group's lr then) and
    applies t = 0 at once, so the first optimizer step uses base_lr_i · lr_lambda(0) (0 during a
    warm-up). The count is ``last_epoch``, PyTorch's name (here it counts optimizer steps).
    """

    def __init__(self, optimizer, lr_lambda):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"LambdaLR: expected an Optimizer, got {type(optimizer).__name__}")
        if not callable(lr_lambda):
            raise TypeError(f"LambdaLR: lr_lambda must be a function of the step, got {lr_lambda!r}")
        self.optimizer = optimizer
        self.lr_lambda = lr_lambda
        self.base_lrs = [group["lr"] for group in optimizer.param_groups]
        self.last_epoch = 0
        self._apply()

    def step(self):
        """Advance the schedule by one step and set the optimizer's learning rates."""
        self.last_epoch += 1
        self._apply()

    def get_last_lr(self):
        """The learning rate of each group, as the schedule last set it."""
        return list(self._last_lr)

    def _apply(self):
        groups = self.optimizer.param_groups
        if len(groups) != len(self.base_lrs):
            raise RuntimeError(f"LambdaLR: the optimizer has {len(groups)} parameter group(s), the "
                               f"scheduler knows {len(self.base_lrs)}; build the scheduler after "
                               "the last add_param_group")
        factor = self.lr_lambda(self.last_epoch)
        if not (isinstance(factor, numbers.Real) and 0 <= factor < math.inf):
            raise ValueError(f"LambdaLR: lr_lambda({self.last_epoch}) returned {factor!r}; the "
                             "factor must be a finite number >= 0")
        self._last_lr = [base_lr * factor for base_lr in self.base_lrs]
        for group, lr in zip(groups, self._last_lr):
            group["lr"] = lr

    def state_dict(self):
        """The step count and the initial learning rates. ``lr_lambda`` is code, not state: the
        scheduler that loads this dict must be built with the same function."""
        return {"last_epoch": self.last_epoch, "base_lrs": list(self.base_lrs)}

    def load_state_dict(self, state_dict):
        """Resume the schedule, and set the optimizer's learning rates to the resumed step's, so
        loading the optimizer's and the scheduler's state works in either order."""
        base_lrs = list(state_dict["base_lrs"])
        if len(base_lrs) != len(self.optimizer.param_groups):
            raise ValueError(f"LambdaLR.load_state_dict: the state_dict has {len(base_lrs)} learning "
                             f"rate(s), the optimizer {len(self.optimizer.param_groups)} parameter "
                             "group(s)")
        self.base_lrs, self.last_epoch = base_lrs, int(state_dict["last_epoch"])
        self._apply()


def _check_steps(num_warmup_steps, num_training_steps):
    for name, value in (("num_warmup_steps", num_warmup_steps),
                        ("num_training_steps", num_training_steps)):
        if not is_int(value) or value < 0:
            raise ValueError(f"{name} must be a whole number >= 0, got {value!r}")
    if num_training_steps == 0:
        raise ValueError("num_training_steps must be at least 1, got 0")
    if num_warmup_steps > num_training_steps:
        raise ValueError(f"num_warmup_steps ({num_warmup_steps}) exceeds num_training_steps "
                         f"({num_training_steps})")


def linear_warmup_decay(optimizer, num_warmup_steps, num_training_steps):
    """Linear warm-up from 0 to the peak (each group's lr) over W steps, then linear decay to 0 at
    step T, and 0 after:

        factor(t) = t / W                   for t < W
                    (T − t) / (T − W)       for W <= t <= T

    Hugging Face's ``get_linear_schedule_with_warmup``. BERT's and ALBERT's TensorFlow code decays
    as 1 − t/T counted from step 0 instead: after warm-up that is this factor times 1 − W/T
    (0.975 for ALBERT's W = 3125, T = 125,000). Warm-up matters for Adam-type methods: their first
    steps move every coordinate by about lr, before v̂ has averaged many gradients.
    """
    _check_steps(num_warmup_steps, num_training_steps)

    def factor(t):
        if t < num_warmup_steps:
            return t / num_warmup_steps
        return max(0.0, (num_training_steps - t) / max(1, num_training_steps - num_warmup_steps))

    return LambdaLR(optimizer, factor)


def cosine_warmup_decay(optimizer, num_warmup_steps, num_training_steps, min_ratio=0.0):
    """Linear warm-up from 0 to the peak over W steps, then half a cosine down to
    ``min_ratio`` × the peak at step T, and that floor after:

        factor(t) = t / W                                          for t < W
                    ρ + (1 − ρ) · ½ (1 + cos(π · (t − W)/(T − W)))    for W <= t <= T
                    ρ                                              for t > T

    with ρ = ``min_ratio``. Cosine annealing is Loshchilov & Hutter (2017), "SGDR: Stochastic
    Gradient Descent with Warm Restarts" (here one cycle, no restart); with ρ = 0 this is Hugging
    Face's ``get_cosine_schedule_with_warmup`` up to step T.
    """
    _check_steps(num_warmup_steps, num_training_steps)
    if not (isinstance(min_ratio, numbers.Real) and 0 <= min_ratio <= 1):
        raise ValueError(f"min_ratio must be a number in [0, 1], got {min_ratio!r}")

    def factor(t):
        if t < num_warmup_steps:
            return t / num_warmup_steps
        progress = min(1.0, (t - num_warmup_steps) / max(1, num_training_steps - num_warmup_steps))
        return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))

    return LambdaLR(optimizer, factor)
