"""``Optimizer``: parameter groups, per-parameter state, and one update per distinct tensor
(PyTorch's ``torch.optim.Optimizer``).

Parameter sharing makes one rule essential: an optimizer steps a *tensor*, not a *use* of it. A
weight shared by L layers is one Parameter with one gradient, the sum of the gradients of its L
uses (see ``minishare.tensor``). The optimizer must move it once per step and keep one set of state
for it (one momentum buffer, one pair of Adam moments): stepping it once per use would move it L
times as far and feed its gradient L times into the moments. So this class deduplicates parameters
by identity, within a group and across groups, and keys ``state`` by the Parameter itself.

Subclasses write their update rule, the equation of their paper, in ``_update``; ``step`` applies
it to each distinct parameter exactly once.
"""
import math
import numbers

from minishare import backend
from minishare.checks import is_real
from minishare.nn.module import Module, Parameter
from minishare.tensor import Tensor


def check_range(name, value, low=0.0, high=math.inf, high_inclusive=True):
    """Raise ValueError, naming the hyperparameter and the value, unless ``value`` is a real number
    with low <= value <= high (value < high when ``high_inclusive`` is False)."""
    inside = is_real(value) and low <= value and (value <= high if high_inclusive else value < high)
    if not inside:     # NaN fails every comparison, so it lands here too
        if high == math.inf:
            requirement = f"a number >= {low}"
        else:
            requirement = f"a number in [{low}, {high}{']' if high_inclusive else ')'}"
        raise ValueError(f"{name} must be {requirement}, got {value!r}")


class Optimizer:
    """Base class of the optimizers.

    ``params``: an iterable of Parameters (``model.parameters()``), or of dicts, the *parameter
    groups*: each has "params" and may override any of ``defaults`` for its parameters. BERT and
    ALBERT, for instance, exclude biases and LayerNorm from weight decay::

        AdamW([{"params": matrices},
               {"params": biases_and_norms, "weight_decay": 0.0}], lr=1e-3)

    ``defaults``: the hyperparameters ("lr", ...) of groups that do not set them.

    ``param_groups`` is a list of dicts: "params" (a list of distinct Parameters) and every
    hyperparameter. A learning-rate schedule changes ``group["lr"]`` between steps.
    ``state[p]`` holds what the update rule remembers about parameter ``p`` (a momentum buffer,
    Adam's moments); it exists once ``p`` has been stepped.
    """

    def __init__(self, params, defaults):
        name = type(self).__name__
        if isinstance(params, Module):
            raise TypeError(f"{name}: got a Module; pass its parameters: "
                            f"{name}(model.parameters(), ...)")
        if isinstance(params, (Tensor, dict)):
            raise TypeError(f"{name}: params must be an iterable of Parameters or of dicts (parameter "
                            f"groups), got a single {type(params).__name__}; wrap it in a list")
        self.defaults = dict(defaults)
        try:
            self._check_hyperparameters(self.defaults)
        except ValueError as err:
            raise ValueError(f"{name}: {err}") from None
        self.param_groups = []
        self.state = {}

        items = list(params)
        n_dicts = sum(isinstance(item, dict) for item in items)
        if 0 < n_dicts < len(items):
            raise TypeError(f"{name}: params mixes Parameters and parameter-group dicts; "
                            "put every Parameter into a group")
        for group in items if n_dicts else [{"params": items}]:
            self.add_param_group(group)
        if not any(group["params"] for group in self.param_groups):
            raise ValueError(f"{name} got an empty parameter list: there is nothing to optimize")

    def add_param_group(self, param_group):
        """Add a group: a dict with "params" and optional hyperparameters (missing ones come from
        ``defaults``). A parameter listed twice is kept once. A parameter that an earlier group
        already holds is dropped from this one if both groups have the same settings, and is an
        error if they differ, since one tensor cannot follow two update rules. A group may be
        empty (a model without biases still gets its no-decay group), the optimizer may not."""
        name, where = type(self).__name__, f"parameter group {len(self.param_groups)}"
        if not isinstance(param_group, dict) or "params" not in param_group:
            raise TypeError(f"{name}: {where} must be a dict with a 'params' entry, "
                            f"got {param_group!r}")
        unknown = sorted(set(param_group) - set(self.defaults) - {"params"})
        if unknown:
            raise ValueError(f"{name}: {where} sets unknown hyperparameter(s) {unknown}; "
                             f"{name} knows {sorted(self.defaults)}")
        params = param_group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        for p in params:
            self._check_parameter(p, where)

        group = {**self.defaults, **param_group}
        try:
            self._check_hyperparameters(group)
        except ValueError as err:
            raise ValueError(f"{name}, {where}: {err}") from None

        owner = {p: earlier for earlier in self.param_groups for p in earlier["params"]}
        kept, seen = [], set()
        for p in params:
            if p in seen:
                continue
            seen.add(p)
            if p in owner:
                differ = [k for k in self.defaults if owner[p][k] != group[k]]
                if differ:
                    raise ValueError(
                        f"{name}: a Parameter of shape {p.shape} is in {where} and in an earlier "
                        f"group with different settings ({', '.join(differ)}); a tensor is "
                        "updated by one rule, so list it in one group only")
                continue
            kept.append(p)
        group["params"] = kept
        self.param_groups.append(group)

    def _check_parameter(self, p, where):
        name = type(self).__name__
        if not isinstance(p, Parameter):
            hint = " (wrap it: nn.Parameter(tensor))" if isinstance(p, Tensor) else ""
            raise TypeError(f"{name}: {where} holds a {type(p).__name__}; optimizers update "
                            f"nn.Parameters{hint}")
        if not p.requires_grad:
            raise ValueError(f"{name}: {where} holds a Parameter of shape {p.shape} with "
                             "requires_grad=False: it never gets a gradient; leave it out of params")

    def _check_hyperparameters(self, group):
        """Raise ValueError for a hyperparameter outside its range. Subclasses add theirs."""
        check_range("lr", group["lr"])

    # --- the update -----------------------------------------------------------------------------
    def zero_grad(self):
        """Forget every parameter's gradient (set it to None, as PyTorch does by default), so the
        next ``backward()`` starts the sum afresh."""
        for group in self.param_groups:
            for p in group["params"]:
                p.grad = None

    def step(self):
        """Update every distinct parameter that has a gradient, exactly once. Parameters whose
        ``grad`` is None (unused in this forward pass) are left alone, state included.

        The update builds new arrays (``p.data = ...``) instead of writing into the old ones, so
        an array the user handed to ``nn.Parameter`` (NumPy does not copy it) and the arrays in a
        saved ``state_dict`` are never changed behind their back."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    # Each optimizer's update rule: _update(param, grad, state, group) -> the new
                    # param, with backend arrays and this parameter's state dict (empty at first).
                    p.data = self._update(p.data, p.grad, self.state.setdefault(p, {}), group)

    # --- saving and resuming ----------------------------------------------------------------------
    def state_dict(self):
        """What resuming training needs, as plain values:

            {"state":        {index: {"step": 3, "exp_avg": array, ...}},
             "param_groups": [{"lr": ..., ..., "params": [index, ...]}, ...]}

        A parameter is named by its position (0, 1, ... through the groups in order), as in
        PyTorch, so the dict fits a fresh optimizer built over the same model. Arrays are the
        backend's (``backend.to_numpy`` them to write a file); ``step`` never modifies them in
        place, so the snapshot stays as it is while training goes on."""
        index = {}
        groups = []
        for group in self.param_groups:
            for p in group["params"]:
                index[p] = len(index)
            groups.append({**group, "params": [index[p] for p in group["params"]]})
        state = {index[p]: dict(self.state[p]) for p in index if p in self.state}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore hyperparameters and state saved by ``state_dict()`` (possibly from another
        process, with host NumPy arrays). Saved parameters map to this optimizer's by position, so
        the number of groups and of parameters in each group must agree. Everything is checked
        before anything changes."""
        name = type(self).__name__
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(f"{name}.load_state_dict: the state_dict has {len(saved_groups)} "
                             f"parameter group(s), this optimizer {len(self.param_groups)}")
        for i, (saved, own) in enumerate(zip(saved_groups, self.param_groups)):
            if len(saved["params"]) != len(own["params"]):
                raise ValueError(f"{name}.load_state_dict: parameter group {i} has "
                                 f"{len(saved['params'])} parameter(s) in the state_dict and "
                                 f"{len(own['params'])} here")
            if set(saved) != set(own):
                raise ValueError(f"{name}.load_state_dict: parameter group {i} has hyperparameters "
                                 f"{sorted(set(saved) - {'params'})} in the state_dict, {name} has "
                                 f"{sorted(set(own) - {'params'})}: a different optimizer saved it")
            try:
                self._check_hyperparameters(saved)
            except ValueError as err:
                raise ValueError(f"{name}.load_state_dict, parameter group {i}: {err}") from None

        by_index = {i: p for saved, own in zip(saved_groups, self.param_groups)
                    for i, p in zip(saved["params"], own["params"])}
        state = {}
        for i, saved_state in state_dict["state"].items():
            if i not in by_index:
                raise ValueError(f"{name}.load_state_dict: state for parameter {i!r}, which no "
                                 "parameter group of the state_dict lists")
            p = by_index[i]
            where = f"{name}.load_state_dict: state of parameter {i}"
            state[p] = {key: _restore(value, p, f"{where}, {key!r},")
                        for key, value in saved_state.items()}

        for saved, own in zip(saved_groups, self.param_groups):
            own.update({k: v for k, v in saved.items() if k != "params"})
        self.state = state

    def __repr__(self):
        lines = [f"{type(self).__name__}("]
        for i, group in enumerate(self.param_groups):
            settings = ", ".join(f"{k}={v}" for k, v in group.items() if k != "params")
            lines.append(f"  group {i}: {len(group['params'])} parameter(s), {settings}")
        return "\n".join(lines) + "\n)"


def _restore(value, p, where):
    """A saved state value for parameter ``p``: numbers as they are, arrays moved to the backend
    as a copy in ``p``'s dtype and checked against its shape."""
    if isinstance(value, numbers.Number):
        return value
    array = backend.asarray(value)
    if tuple(array.shape) != p.shape:
        raise ValueError(f"{where} has shape {tuple(array.shape)}, the parameter {p.shape}")
    return array.astype(p.dtype, copy=True)
