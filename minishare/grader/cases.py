"""A graded case: the inputs the grader chooses, what the submission computes, and the verdict.

A case has up to three parts, and only the probe ever runs beside the submission's code::

    @case("ex03_task3")
    def test_grouped_query_attention(attention, given):   # runs beside the submission's code
        x, mask = given["x"], given["mask"]                # inputs the grader chose
        return attention.gqa(x, mask).numpy()             # data: this crosses to the grader

    @test_grouped_query_attention.given                   # runs in the grader's process
    def _(rng):
        x = rng.standard_normal((2, 4, 8))
        return {"x": x, "mask": decoder_mask(...)}         # plain data, sent to the probe

    @test_grouped_query_attention.judge                   # runs in the grader's process
    def _(out, ref, given):
        same(out, reference_gqa(given["x"], given["mask"]))

The *probe* (the decorated function) gets the student's modules, named by its parameters
(``attention`` is ``attention.py``), and, when it has a parameter ``given``, the data of the
case's ``given`` function. It calls the modules and returns plain data: numbers, strings, None,
lists, dicts with string keys, NumPy arrays. The grader sends the worker a file of probes only
(``probes.probe_source``): judges, ``given`` functions and every helper the probes do not call
stay in the grader's process, so a submission can neither read an expected value nor call a
reference helper. An answer the probe would need to build its inputs (task 2's mask, for task 3)
therefore belongs in ``given``.

``given(rng)`` draws from ``rng``, a NumPy Generator: a visible case's is seeded by its name (so
``expected.json`` and a student's own run agree); a hidden case's, per submission, from a seed
only the grader knows, so learning the inputs from a published output buys nothing.

The *judge* gets the data after it has crossed as JSON (``encode``/``decode``), ``ref``, the
reference solution's data on the same probe and inputs, and, if it takes a third parameter, the
``given`` data. Before any judge, the data must have the structure of the reference's
(``structure``: the same dict keys, list lengths and array shapes), so a probe the submission
shortened scores zero. Without a judge, the case passes when the data equals the reference's
(``same``). ``pytest`` collects a case as a test, so a student runs the visible ones as usual
(``pytest -m ex05_task1``): all parts then run in the student's own process, against the
reference data the release ships in ``expected.json``.
"""
import base64
import importlib
import inspect
import json
import math
import os
import warnings
import zlib

import numpy as np
import pytest

MAX_BYTES = 2_000_000     # of one case's data as JSON: a probe returns results, not data sets
EXPECTED = "expected.json"


class Case:
    """One graded case: ``given(rng) -> inputs``, ``probe(*modules[, given]) -> data`` and
    ``judge(out, ref[, given])``."""

    def __init__(self, marker, probe, rtol, atol, timeout):
        self.marker, self.probe, self.name = marker, probe, probe.__name__
        parameters = tuple(inspect.signature(probe).parameters)
        self.modules = tuple(p for p in parameters if p != "given")     # ("assign",)
        self.wants_given = "given" in parameters
        self.rtol, self.atol, self.timeout = rtol, atol, timeout
        self.doc = inspect.getdoc(probe) or ""
        self.given = None
        self.judge = lambda out, ref: same(out, ref, self.rtol, self.atol)

    def inputs(self, seed=None):
        """The ``given`` data as it crosses to the probe (None when the probe takes none).
        ``seed``: the grader's secret for hidden cases; None draws the case's public inputs, which
        a student's copy, without the ``given`` function, reads from ``expected.json``."""
        if self.given is None:
            return _expected(self.probe, self.name, None, "given") if self.wants_given else None
        key = zlib.crc32(self.name.encode("utf-8"))
        rng = np.random.default_rng(key if seed is None else [seed, key])
        return decode(encode(self.given(rng)))

    def call(self, modules, given=None):
        """Run the probe on the student's modules (in the order of ``self.modules``)."""
        return self.probe(*modules, **({"given": given} if self.wants_given else {}))

    def run(self, *modules, given=None):
        """The probe's data on these modules, as it arrives on the grader's side."""
        return decode(encode(self.call(modules, given)))

    def verdict(self, out, ref, given=None):
        """Raise AssertionError unless ``out`` passes: the reference's structure, then the judge."""
        problem = structure(out, ref)
        if problem:
            raise AssertionError(f"the probe's data does not have the structure the grader asked for: {problem}")
        if len(inspect.signature(self.judge).parameters) >= 3:
            self.judge(out, ref, given)
        else:
            self.judge(out, ref)


def case(marker, *, rtol=1e-7, atol=1e-10, timeout=20.0):
    """Decorator: the function becomes the probe of a case of task ``marker`` ("ex05_task1")."""
    def wrap(probe):
        graded = Case(marker, probe, rtol, atol, timeout)

        def test():                              # what pytest runs in a student's checkout
            given = graded.inputs()
            out = graded.run(*(importlib.import_module(name) for name in graded.modules), given=given)
            graded.verdict(out, _expected(probe, graded.name, out, "reference"), given)

        def set_judge(judge):
            graded.judge = judge
            return judge

        def set_given(given):
            graded.given = given
            return given

        test.__name__ = test.__qualname__ = graded.name
        test.__doc__, test.__module__ = probe.__doc__, probe.__module__
        test.case, test.judge, test.given = graded, set_judge, set_given
        with warnings.catch_warnings():      # the grader loads cases outside a pytest run
            warnings.simplefilter("ignore", pytest.PytestUnknownMarkWarning)
            return getattr(pytest.mark, marker)(test)
    return wrap


def cases_of(module):
    """The cases a test module defines, in the order of the file."""
    found = [obj.case for obj in vars(module).values() if isinstance(getattr(obj, "case", None), Case)]
    return sorted(found, key=lambda c: c.probe.__code__.co_firstlineno)


def _expected(probe, name, out, part):
    """A student's own run reads ``part`` ("reference": the reference data; "given": the inputs)
    of case ``name`` from ``expected.json`` beside the test file (the release writes it); in the
    teacher's tree, where the module is the reference, the reference is ``out`` itself."""
    path = os.path.join(os.path.dirname(os.path.abspath(inspect.getfile(probe))), EXPECTED)
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        table = json.load(f)
    if name not in table.get(part, {}):
        raise AssertionError(f"{EXPECTED} has no {part} for {name}; release the exercises again")
    return rebuild(table[part][name])


# --------------------------------------------------------------------------- helpers for probes
def raises(exception, fn, *args, **kwargs):
    """Whether ``fn(*args, **kwargs)`` raises ``exception`` (data a probe can return)."""
    try:
        fn(*args, **kwargs)
    except exception:
        return True
    return False


def same(actual, expected, rtol=1e-7, atol=1e-10, where="the result"):
    """Assert that ``actual`` equals ``expected``: arrays and floats to rtol/atol, the rest exactly.
    The message names the first place they differ."""
    if isinstance(expected, np.ndarray):
        if not isinstance(actual, np.ndarray):
            raise AssertionError(f"{where}: expected an array of shape {expected.shape}, got {_short(actual)}")
        if actual.shape != expected.shape:
            raise AssertionError(f"{where}: shape {actual.shape}, expected {expected.shape}")
        if expected.dtype.kind in "fc" or actual.dtype.kind in "fc":
            close = np.isclose(actual.astype(float), expected.astype(float), rtol=rtol, atol=atol, equal_nan=True)
            if not close.all():
                i = tuple(int(k) for k in np.argwhere(~close)[0])
                raise AssertionError(f"{where}{list(i)}: {actual[i].item()!r}, expected {expected[i].item()!r} "
                                     f"({int((~close).sum())} of {close.size} entries differ)")
        elif not np.array_equal(actual, expected):
            i = tuple(int(k) for k in np.argwhere(actual != expected)[0])
            raise AssertionError(f"{where}{list(i)}: {actual[i].item()!r}, expected {expected[i].item()!r}")
    elif isinstance(expected, float) and not isinstance(actual, bool) and isinstance(actual, (int, float)):
        if not (math.isclose(actual, expected, rel_tol=rtol, abs_tol=atol)
                or (math.isnan(actual) and math.isnan(expected))):
            raise AssertionError(f"{where}: {actual!r}, expected {expected!r}")
    elif isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            raise AssertionError(f"{where}: {_short(actual)}, expected a list of {len(expected)}: {_short(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            same(a, e, rtol, atol, f"{where}[{i}]")
    elif isinstance(expected, dict):
        if not isinstance(actual, dict) or set(actual) != set(expected):
            raise AssertionError(f"{where}: keys {sorted(actual) if isinstance(actual, dict) else _short(actual)}, "
                                 f"expected {sorted(expected)}")
        for key in expected:
            same(actual[key], expected[key], rtol, atol, f"{where}[{key!r}]")
    elif type(actual) is not type(expected) or actual != expected:
        raise AssertionError(f"{where}: {_short(actual)}, expected {_short(expected)}")


def structure(actual, expected, where="the result"):
    """The first place where ``actual`` lacks the shape of ``expected`` ("" when none): other dict
    keys, another list length, another array shape, a container where a value was expected or the
    reverse. Values are the judge's business; an int where a float was expected is no problem."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{where}: {_short(actual)}, expected a dict with keys {sorted(expected)}"
        if set(actual) != set(expected):
            missing, extra = sorted(set(expected) - set(actual)), sorted(set(actual) - set(expected))
            return f"{where}: keys missing {missing}, keys not asked for {extra}"
        return next((p for k in expected if (p := structure(actual[k], expected[k], f"{where}[{k!r}]"))), "")
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"{where}: {_short(actual)}, expected a list of {len(expected)}"
        return next((p for i, (a, e) in enumerate(zip(actual, expected))
                     if (p := structure(a, e, f"{where}[{i}]"))), "")
    if isinstance(expected, np.ndarray):
        if not isinstance(actual, np.ndarray) or actual.shape != expected.shape:
            got = f"shape {actual.shape}" if isinstance(actual, np.ndarray) else _short(actual)
            return f"{where}: {got}, expected an array of shape {expected.shape}"
        return ""
    if isinstance(actual, (dict, list, np.ndarray)):
        return f"{where}: {_short(actual)}, expected a single value like {_short(expected)}"
    return ""


def _short(value):
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "..."


# --------------------------------------------------------------------------- the wire format
def encode(data):
    """``data`` as JSON text: arrays tagged with dtype and shape, tuples as lists; anything else
    (a Tensor, an object of the student's) is refused, so nothing but data crosses."""
    text = json.dumps(_plain(data, "the result"), allow_nan=True)
    if len(text) > MAX_BYTES:
        raise ValueError(f"the probe returned {len(text):,} bytes of data, more than {MAX_BYTES:,}")
    return text


def _plain(value, where):
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, np.generic):
        return _plain(value.item(), where)
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            raise TypeError(f"{where}: an array of dtype {value.dtype} cannot be sent (numbers and bools only)")
        return {"__array__": value.dtype.str, "shape": list(value.shape), "data": value.ravel().tolist()}
    if isinstance(value, bytes):
        return {"__bytes__": base64.b64encode(value).decode("ascii")}
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError(f"{where}: dict keys must be strings")
        return {k: _plain(v, f"{where}[{k!r}]") for k, v in value.items()}
    raise TypeError(f"{where}: a {type(value).__name__} cannot be sent; return numbers, strings, "
                    "lists, dicts or NumPy arrays (a Tensor's values are t.numpy())")


def decode(text):
    """The data of ``encode``'s JSON text (the grader's side: JSON only, nothing is executed)."""
    return rebuild(json.loads(text))


def rebuild(value):
    """The data of a JSON value already parsed (a record's ``"data"``): arrays and bytes back."""
    if isinstance(value, list):
        return [rebuild(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__array__" in value:
        dtype = np.dtype(value["__array__"])
        if dtype.kind not in "biuf":
            raise ValueError(f"data: arrays of dtype {dtype} are not accepted")
        return np.array(value["data"], dtype=dtype).reshape(value["shape"])
    if "__bytes__" in value:
        return base64.b64decode(value["__bytes__"])
    return {k: rebuild(v) for k, v in value.items()}
