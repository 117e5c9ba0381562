"""The experiments ``reproduce`` knows: every module ``minishare/experiments/exp_*.py``, found by
its name, and any module handed to ``register`` (an experiment kept outside the package, such as
the toy experiment of the tests). Adding an experiment is adding its file: no list to edit."""
import importlib
import pkgutil

from minishare.errors import InvalidValue
from minishare.experiments.experiment import Experiment

_registered = {}
_found = {}       # the package's own, imported on first use


def register(module):
    """Add the experiment ``module`` declares (``experiment.Experiment.of``); returns it. The
    same module again is a no-op; another module with a name already taken is an error."""
    experiment = Experiment.of(module)
    known = _all().get(experiment.name)
    if known is not None and known.module is not module:
        raise InvalidValue(f"experiment name {experiment.name!r} is taken by {known.module.__name__}")
    _registered[experiment.name] = experiment
    return experiment


def unregister(name):
    """Remove an experiment added with ``register`` (the package's own cannot be removed)."""
    _registered.pop(name, None)


def experiments():
    """{name: Experiment}, in the report's order (``ORDER``, then name)."""
    return dict(sorted(_all().items(), key=lambda item: (item[1].order, item[0])))


def get(name):
    """The experiment called ``name``; an error listing the known ones otherwise."""
    found = _all()
    if name not in found:
        raise InvalidValue(f"unknown experiment {name!r}; choose from {', '.join(experiments())}")
    return found[name]


def _all():
    return {**_builtin(), **_registered}


def _builtin():
    """The package's own experiments (imported once, on first use)."""
    if not _found:
        import minishare.experiments as package
        for info in pkgutil.iter_modules(package.__path__):
            if info.name.startswith("exp_"):
                experiment = Experiment.of(importlib.import_module(f"{package.__name__}.{info.name}"))
                if experiment.name in _found:
                    raise InvalidValue(f"two experiment modules are called {experiment.name!r}")
                _found[experiment.name] = experiment
    return _found
