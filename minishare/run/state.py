"""What a resumed run's checkpoint must hold besides its identity (``folder.identity``), checked
against the run before any of it is loaded: an edited or foreign training state is refused,
naming what it holds and what the run has, never trained on.

* the parameters are in the dtype the run trains in (a float64 checkpoint would train on in
  float64 without a word);
* the optimizer's hyperparameters (betas, eps, weight decay) are those the run's arguments build;
  its state for each parameter has the parameter's dtype (not bool, int or float16, which loading
  would cast silently) and finite values (a NaN there would surface steps later as "training
  diverged"); Adam's step count lies between 1 (step 0 divides by zero in the bias correction)
  and the run's step;
* the schedule's base learning rates are the run's ``lr`` and its step is the run's.
"""
import math
import numbers

from minishare import backend
from minishare.checks import is_int

SHOWN = 3            # problems named in full; the rest are counted


def problems(state, trainer, dtype):
    """["what the checkpoint holds (what the run has)"] for a training ``state`` (from
    ``checkpoint.load``) resumed into ``trainer``, the run's fresh Trainer; ``dtype``: the run's."""
    found = []
    names = {id(p): name for name, p in trainer.model.named_parameters()}
    dtypes = sorted({str(p.dtype) for p in trainer.model.parameters()})
    if dtypes != [str(dtype)]:
        found.append(f"parameters of dtype {', '.join(dtypes)} (the run trains in {dtype})")
    step, history = state.get("step"), state.get("history")
    if is_int(step) and isinstance(history, list) and len(history) != step:
        return [f"step {step} with a history of {len(history)} rows (one per step: edited or mismatched state)"]
    optimizer, scheduler = state.get("optimizer"), state.get("scheduler")
    if isinstance(optimizer, dict) and isinstance(optimizer.get("param_groups"), list):
        found += _optimizer(optimizer, trainer.optimizer, names, step)
    if isinstance(scheduler, dict):
        base, own = scheduler.get("base_lrs"), list(trainer.scheduler.base_lrs)
        if base != own:
            found.append(f"scheduler base learning rates {base!r:.60} (the run's lr gives {own})")
        if is_int(step) and scheduler.get("last_epoch") != step:
            found.append(f"scheduler at step {scheduler.get('last_epoch')!r:.20} (the run is at step {step})")
    return found


def _optimizer(saved, optimizer, names, step):
    found = []
    by_index = {}
    for i, (group, own) in enumerate(zip(saved["param_groups"], optimizer.param_groups)):
        if not isinstance(group, dict):
            continue
        for key in sorted(set(own) - {"params", "lr"}):
            if key in group and _plain(group[key]) != _plain(own[key]):
                found.append(f"optimizer group {i} {key}={group[key]!r:.40} (the run's: {own[key]!r})")
        if isinstance(group.get("params"), list):
            by_index.update(zip(group["params"], own["params"]))
    states = saved.get("state")
    for index, values in (states.items() if isinstance(states, dict) else ()):
        p = by_index.get(index)
        if p is None or not isinstance(values, dict):
            continue                     # the optimizer's own load refuses these
        name = names.get(id(p), f"#{index}")
        count = values.get("step")
        if "step" in values and (not is_int(count) or not 1 <= count <= (step if is_int(step) else math.inf)):
            found.append(f"Adam step count {count!r:.20} for {name} (it must lie between 1 and the run's "
                         f"step, {step})")
        for key, value in values.items():
            if isinstance(value, numbers.Number) or key == "step":
                continue
            dtype = getattr(value, "dtype", None)
            if dtype is None or str(dtype) != str(p.dtype):
                found.append(f"optimizer state {key} of {name} of dtype {dtype} (the parameter's is {p.dtype})")
            elif not bool(backend.xp.isfinite(backend.asarray(value)).all()):
                found.append(f"optimizer state {key} of {name} holding NaN or inf")
    return found


def _plain(value):
    """A hyperparameter compared by value (betas as a tuple or a list alike)."""
    return list(value) if isinstance(value, tuple) else value


def describe(found):
    """The first ``SHOWN`` problems and how many more: a line of bounded length."""
    more = len(found) - SHOWN
    return "; ".join(found[:SHOWN]) + (f"; and {more} more" if more > 0 else "")
