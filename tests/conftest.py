"""Shared test helpers, the ``gpu`` marker and the Hypothesis profile.

Every test builds its inputs as host NumPy arrays, moves them to the active backend with
:func:`leaf` / :func:`const` (``minishare.tensor``) or :func:`dev` (``backend.asarray``), and reads
results back with :func:`host` (``.numpy()`` / ``backend.to_numpy``). So the same suite runs
unchanged under ``MINISHARE_BACKEND=numpy``, ``strict`` (catches host/device mixing on a CPU) and
``cupy`` (on a GPU).

Import the helpers in a test module with ``from conftest import leaf, host, ...`` (pytest puts
``tests/`` on ``sys.path``).
"""
import os
import re
import signal

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

import minishare
from minishare import backend

# Small, deterministic property tests: the whole suite stays well under a minute on two cores.
# Raise the effort locally with HYPOTHESIS_PROFILE=thorough.
settings.register_profile("minishare", max_examples=25, deadline=None, derandomize=True,
                          database=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=200, deadline=None, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "minishare"))


# --- building inputs (host NumPy -> active backend) ----------------------------------------------
def randn(*shape, seed=0):
    """A float64 host array of standard normal values."""
    return np.random.default_rng(seed).standard_normal(shape)


def away_from_zero(*shape, seed=0, low=0.5):
    """float64 host values with |x| >= low (denominators, relu/abs kinks)."""
    rng = np.random.default_rng(seed)
    return rng.choice([-1.0, 1.0], size=shape) * (low + np.abs(rng.standard_normal(shape)))


def positive(*shape, seed=0, low=0.5):
    """float64 host values >= low (log, sqrt, fractional powers)."""
    return low + np.abs(randn(*shape, seed=seed))


def leaf(array, requires_grad=True):
    """A leaf tensor that requires grad, keeping the host array's dtype (float64 for gradcheck)."""
    return minishare.tensor(np.asarray(array), requires_grad=requires_grad)


def const(array):
    """A tensor without grad (ids, targets, masks), moved from the host."""
    return minishare.tensor(np.asarray(array))


def dev(array):
    """A raw backend array from host data (``backend.asarray``), for indices and masks."""
    return backend.asarray(np.asarray(array))


def host(x):
    """A host NumPy copy of a Tensor, a backend array or a NumPy array."""
    if isinstance(x, minishare.Tensor):
        return x.numpy()
    return backend.to_numpy(x)


def grad_of(t):
    """The gradient of a leaf as a host NumPy array (fails clearly if backward never reached it)."""
    assert t.grad is not None, "backward() did not reach this tensor"
    return backend.to_numpy(t.grad)


def check(fn, *inputs, **kwargs):
    """minishare.gradcheck, asserting it returns True (it raises GradcheckError otherwise)."""
    assert minishare.gradcheck(fn, *inputs, **kwargs) is True


# --- GPU marker -------------------------------------------------------------------------------------
def cuda_available():
    """True when CuPy imports and CUDA sees at least one GPU."""
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:   # not installed, no driver, no device
        return False


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs CuPy and a CUDA GPU; skipped cleanly without them")


def pytest_collection_modifyitems(config, items):
    gpu_items = [item for item in items if "gpu" in item.keywords]
    if gpu_items and not cuda_available() and os.environ.get("MINISHARE_REQUIRE_GPU") == "1":
        # benchmarks/gpu.sh sets it: on the GPU machine a skipped GPU test must not read as a pass
        raise pytest.UsageError("MINISHARE_REQUIRE_GPU=1, but CuPy does not import or sees no GPU "
                                "(pip install -r requirements-gpu.txt; check nvidia-smi)")
    if gpu_items and not cuda_available():
        skip = pytest.mark.skip(reason="needs CuPy and a CUDA GPU")
        for item in gpu_items:
            item.add_marker(skip)


# --- fixtures ---------------------------------------------------------------------------------------
@pytest.fixture(autouse=True)
def _restore_backend():
    """Whatever a test switches (backend, default dtype), the next test starts as the run began."""
    name, dtype = backend.name, backend.default_dtype
    yield
    if backend.name != name:
        backend.use(name)
    backend.default_dtype = dtype


@pytest.fixture
def strict_backend():
    """Switch to the strict (CuPy-like) backend for one test; restored afterwards."""
    backend.use("strict")
    return backend.xp


def letters(text):
    """'ABCCBA' -> [0, 1, 2, 2, 1, 0]: set A is the first one created."""
    return [ord(ch) - ord("A") for ch in text]


# A shared weight's gradient is the sum over the positions using it: the tests of the stacks and
# of the models compare a shared model with a not-shared copy built by ``unshare``.
SET_NAME = re.compile(r"^(?P<prefix>(?:.*\.)?)(?P<component>cross_attention|attention|ffn)_sets\."
                      r"(?P<index>\d+)\.(?P<rest>.*)$")


def unshare(shared, unshared, schedules):
    """Load into the not-shared ``unshared`` model a copy of the set that position i of ``shared``
    uses (by the hand-written ``schedules``: {stack prefix: {component: letters}})."""
    state = shared.state_dict()

    def source(name):
        m = SET_NAME.match(name)
        if m is None:
            return name
        index = letters(schedules[m["prefix"]][m["component"]])[int(m["index"])]
        return f"{m['prefix']}{m['component']}_sets.{index}.{m['rest']}"

    unshared.load_state_dict({name: host(state[source(name)]) for name in unshared.state_dict()})
    assert len({id(p) for p in unshared.parameters()}) == len(list(unshared.named_parameters(
        remove_duplicate=False))) - len(unshared.shared_names())     # really one tensor per name


@pytest.fixture(scope="module")
def text_corpus(tmp_path_factory):
    """A small UTF-8 corpus file: 40 grammar stories separated by blank lines (the CLI's --corpus)."""
    from minishare import data
    path = tmp_path_factory.mktemp("corpus") / "stories.txt"
    path.write_text("\n\n".join(" ".join(story) for story in data.grammar_corpus(40, seed=1)) + "\n",
                    encoding="utf-8")
    return path


def terminal_environment():
    """The environment a student's shell gives a command: this one without what a pytest-xdist
    worker adds (``PYTEST_XDIST_WORKER`` and the like). A pytest started with those believes it is a
    worker, and plugins installed beside it (pytest-benchmark) warn that xdist is active."""
    return {name: value for name, value in os.environ.items()
            if not name.startswith(("PYTEST_XDIST_", "PYTEST_CURRENT_TEST"))}


def default_signals():
    """A child process's ``preexec_fn``: it starts with the signals a terminal gives it, whatever
    this test run inherited (a background job ignores SIGINT, and its children would train on
    through a Ctrl-C)."""
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)


@pytest.fixture
def terminal_sigint():
    """Python's own Ctrl-C handler for a test that sends SIGINT to its own process, as a terminal
    gives it: a test run started as a background job inherits SIGINT ignored, and the library keeps
    an ignored signal ignored (by design: ``nohup`` and background jobs), so the test would see
    nothing happen."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)
