"""``Parameter`` and ``Module``: PyTorch's way of organizing weights, written out.

A Module holds Parameters and other Modules as attributes; ``parameters()`` walks that tree. When
the same Parameter (or the same sub-Module) is reachable from two places, which is exactly what
cross-layer parameter sharing is, it is one tensor: ``parameters()`` yields it once, so the
optimizer steps it once and counts see it once. ``named_parameters(remove_duplicate=False)`` and
``shared_names()`` show every name a shared tensor answers to.
"""
from collections import OrderedDict

from minishare import backend
from minishare.tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor that a Module registers as trainable (requires_grad=True by default)."""

    def __init__(self, data, requires_grad=True):
        super().__init__(data, requires_grad=requires_grad)

    def __repr__(self):
        return f"Parameter(shape={self.shape}, dtype={self.dtype})"


class Module:
    """Base class of every layer and model. Subclasses set Parameters and Modules as attributes in
    ``__init__`` and define ``forward``; calling the module calls ``forward``."""

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__}.__init__ must call super().__init__() "
                                 "before assigning attributes")
        for registry in (self._parameters, self._modules):
            registry.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        object.__setattr__(self, name, value)

    def __copy__(self):
        """``copy.copy(module)``: the same class, attributes, Parameters and submodules, in
        registries of its own, so that replacing a child of the copy leaves ``module`` as it was
        (a relaxed layer keeps its shared set's tensors and swaps its Linears: ``models.recursive``)."""
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__, _parameters=OrderedDict(self._parameters),
                              _modules=OrderedDict(self._modules))
        return clone

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    # --- walking the tree -------------------------------------------------------------------
    def named_modules(self, prefix="", remove_duplicate=True, _seen=None):
        """(name, module) for this module and every module below it, each once by default."""
        seen = set() if _seen is None else _seen
        if remove_duplicate and id(self) in seen:
            return
        seen.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name, remove_duplicate, seen)

    def modules(self):
        return (m for _, m in self.named_modules())

    def named_children(self):
        return iter(self._modules.items())

    def children(self):
        return iter(self._modules.values())

    def named_parameters(self, remove_duplicate=True):
        """(name, parameter) pairs. A shared parameter appears once, under the first name it is
        reached by, unless ``remove_duplicate=False``, which lists it under every name."""
        seen = set()
        for module_name, module in self.named_modules(remove_duplicate=remove_duplicate):
            for name, p in module._parameters.items():
                if remove_duplicate and id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{module_name}.{name}" if module_name else name), p

    def parameters(self):
        """Every distinct parameter once (deduplicated by identity)."""
        return (p for _, p in self.named_parameters())

    def shared_names(self):
        """{first name: [every name]} for each parameter reachable under more than one name."""
        names = OrderedDict()
        for name, p in self.named_parameters(remove_duplicate=False):
            names.setdefault(id(p), []).append(name)
        return OrderedDict((all_names[0], all_names) for all_names in names.values() if len(all_names) > 1)

    # --- modes and gradients ----------------------------------------------------------------
    def train(self, mode=True):
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def zero_grad(self):
        """Forget accumulated gradients (set to None, as PyTorch's default does)."""
        for p in self.parameters():
            p.grad = None

    def to(self, dtype):
        """Convert every parameter to ``dtype`` in place (e.g. float64 for gradcheck). Parameters
        keep their identity, so shared tensors stay shared."""
        for p in self.parameters():
            p.data = p.data.astype(dtype)
            p.grad = None
        return self

    def double(self):
        return self.to(backend.xp.float64)

    # --- state ------------------------------------------------------------------------------
    def state_dict(self):
        """name -> array for every name (a shared tensor appears under each of its names, as in
        PyTorch; ``minishare.save`` stores it once)."""
        return OrderedDict((name, p.data) for name, p in self.named_parameters(remove_duplicate=False))

    def load_state_dict(self, state_dict, strict=True):
        """Copy arrays into the existing parameters (so sharing is kept). With ``strict``, missing
        or unexpected keys are an error; a shape mismatch always is. All problems are reported
        together."""
        own = OrderedDict(self.named_parameters(remove_duplicate=False))
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        mismatched = [f"{k}: checkpoint {tuple(state_dict[k].shape)} vs model {own[k].shape}"
                      for k in own if k in state_dict and tuple(state_dict[k].shape) != own[k].shape]
        problems = []
        if strict and missing:
            problems.append("missing keys: " + ", ".join(missing))
        if strict and unexpected:
            problems.append("unexpected keys: " + ", ".join(unexpected))
        if mismatched:
            problems.append("shape mismatch: " + "; ".join(mismatched))
        if problems:
            raise RuntimeError(f"load_state_dict into {type(self).__name__}: " + " | ".join(problems))
        for name, p in own.items():
            if name in state_dict:
                p.data = backend.asarray(state_dict[name]).astype(p.dtype, copy=True)
        return self

    def __repr__(self):
        lines = [f"  ({name}): " + repr(m).replace("\n", "\n  ") for name, m in self._modules.items()]
        extra = self.extra_repr()
        if not lines:
            return f"{type(self).__name__}({extra})"
        return f"{type(self).__name__}({extra}\n" + "\n".join(lines) + "\n)"

    def extra_repr(self):
        return ""
