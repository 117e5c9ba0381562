"""Containers: ``ModuleList`` (indexable, registers its items) and ``Sequential`` (a pipeline)."""
from minishare.nn.module import Module


class ModuleList(Module):
    """A list of modules whose parameters the parent sees. Holding the same module twice is
    allowed: it is one set of parameters used at two places (sharing)."""

    def __init__(self, modules=()):
        super().__init__()
        for m in modules:
            self.append(m)

    def append(self, module):
        setattr(self, str(len(self._modules)), module)
        return self

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


class Sequential(ModuleList):
    """Apply the modules in order: Sequential(a, b)(x) = b(a(x))."""

    def __init__(self, *modules):
        super().__init__(modules)

    def forward(self, x):
        for m in self:
            x = m(x)
        return x
