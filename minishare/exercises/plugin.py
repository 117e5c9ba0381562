"""The pytest plugin of the exercise runner, loaded in the test subprocess only
(``-p minishare.exercises.plugin``).

``--exercise-log FILE`` appends one JSON line when a test file starts being collected or a test
starts ("begin"), and one when it is done ("end": outcome, task markers, the exception's type and
message, pytest's report). A process that dies or hangs leaves a "begin" without its "end": the
runner knows which test did it.

``--exercise-timeout S`` interrupts a test whose call runs longer than S seconds (SIGALRM, so a
Python loop that never ends fails that test instead of the whole run; the alarm repeats every half
second in case the student's code swallows the exception).
"""
import json
import re
import signal

import pytest

TASK_MARKER = re.compile(r"^ex\d\d_task\d+$")
MAX_OUTPUT = 4000
_CONFIG = []      # the session's config, for hooks that are not handed one
_RESULTS = {}     # nodeid -> what its setup, call and teardown reports said so far


class TestTimeout(Exception):
    """A test ran longer than the runner's limit."""


def pytest_addoption(parser):
    group = parser.getgroup("minishare exercises")
    group.addoption("--exercise-log", default=None, help="JSON-lines log of begun and ended tests")
    group.addoption("--exercise-timeout", type=float, default=0.0, help="seconds per test call")


def _log(config, **record):
    path = config.getoption("exercise_log")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
            f.flush()


def pytest_collectstart(collector):
    if isinstance(collector, pytest.Module):
        _log(collector.config, event="begin", nodeid=collector.nodeid, kind="collect")


def pytest_collectreport(report):
    if report.nodeid.endswith(".py"):
        _log(_CONFIG[0], event="end", nodeid=report.nodeid, kind="collect", outcome=report.outcome,
             output=str(report.longreprtext)[-MAX_OUTPUT:] if report.failed else "")


def pytest_configure(config):
    _CONFIG.append(config)


def pytest_collection_modifyitems(config, items):
    for item in items:
        _log(config, event="item", nodeid=item.nodeid, kind="test",
             markers=sorted({m.name for m in item.iter_markers() if TASK_MARKER.match(m.name)}))


def pytest_runtest_logstart(nodeid, location):
    _log(_CONFIG[0], event="begin", nodeid=nodeid, kind="test")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    result = _RESULTS.setdefault(item.nodeid, {
        "markers": sorted({m.name for m in item.iter_markers() if TASK_MARKER.match(m.name)}),
        "outcome": "passed", "exc_type": None, "message": "", "output": "", "duration": 0.0})
    result["duration"] += report.duration
    if report.skipped and result["outcome"] == "passed":
        result["outcome"] = "skipped"
    if report.failed and result["exc_type"] is None:
        result["outcome"] = "failed"
        if call.excinfo is not None:
            result["exc_type"] = call.excinfo.typename
            result["message"] = str(call.excinfo.value)[:MAX_OUTPUT]
        result["output"] = str(report.longreprtext)[-MAX_OUTPUT:]


def pytest_runtest_logfinish(nodeid, location):
    _log(_CONFIG[0], event="end", nodeid=nodeid, kind="test", **_RESULTS.pop(nodeid, {
        "markers": [], "outcome": "failed", "exc_type": None, "message": "no report",
        "output": "", "duration": 0.0}))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    seconds = item.config.getoption("exercise_timeout")
    if not seconds or not hasattr(signal, "SIGALRM"):
        yield
        return

    def expire(signum, frame):
        raise TestTimeout(f"the test ran longer than {seconds:g} s (an endless loop?)")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.5)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
