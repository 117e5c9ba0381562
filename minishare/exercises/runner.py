"""Running exercise tests in a pytest subprocess that a student's code cannot take down with it.

``run(tree, paths)`` runs pytest in ``tree`` with the logging plugin (``minishare.exercises.plugin``)
and returns one result per test. Three things can go wrong with a submission, and each costs only
the test it happens in:

* an endless Python loop: the plugin's alarm fails the test after ``timeout`` seconds;
* a hang the alarm cannot interrupt (inside C code) or a crash of the process (``os._exit``, a
  segfault): the runner sees a test that began and never ended, kills the process if it is still
  there, records that test as failed, and starts pytest again without the tests already done;
* a module that does not import: its tests are not collected, and the collection error is kept
  for the report.

Tests run on NumPy (``MINISHARE_BACKEND=numpy``) with one BLAS thread, whatever the caller's
environment, so a grade does not depend on the machine's settings.
"""
import contextlib
import dataclasses
import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time


@dataclasses.dataclass
class Run:
    tests: dict              # nodeid -> {"outcome", "markers", "exc_type", "message", "output", ...}
    collected: dict          # nodeid -> its task markers, for every test collected
    collect_errors: dict     # test file -> pytest's report
    problems: list           # pytest itself stopped (usage or internal error): one line each


def repository_root():
    """The folder holding the ``minishare`` package, for the subprocess's PYTHONPATH."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def environment():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [repository_root(), env.get("PYTHONPATH")]))
    env.update(MINISHARE_BACKEND="numpy", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
    return env


def run(tree, paths, timeout=60.0, collect_only=False):
    """Run the tests in ``paths`` (relative to ``tree``) and return a ``Run``."""
    result = Run({}, {}, {}, [])
    targets, ignored = list(paths), []
    with tempfile.TemporaryDirectory(prefix="minishare-run-") as scratch:
        for attempt in itertools.count():      # each attempt settles at least one test or file
            log = os.path.join(scratch, f"log{attempt}.jsonl")
            output = os.path.join(scratch, f"out{attempt}.txt")
            command = [sys.executable, "-m", "pytest", "-q", "-p", "minishare.exercises.plugin",
                       "-p", "no:cacheprovider", "--rootdir", ".", f"--exercise-log={log}",
                       f"--exercise-timeout={timeout}", *targets, *(f"--ignore={p}" for p in ignored)]
            if collect_only:
                command.append("--collect-only")
            with open(output, "w") as out:
                process = subprocess.Popen(command, cwd=tree, env=environment(), stdout=out,
                                           stderr=subprocess.STDOUT, start_new_session=True)
                hung = _watch(process, log, limit=2 * timeout + 15)
            victims = [n for n, state in _read(log, result).items() if state == "open"]
            if not victims:
                if process.returncode not in (0, 1, 5):
                    with open(output) as f:
                        tail = f.read().strip().splitlines()[-1:] or ["no output"]
                    result.problems.append(f"pytest stopped with exit status {process.returncode}: {tail[0]}")
                return result
            victim = victims[-1]
            why = (f"ran longer than {2 * timeout + 15:g} s and was killed" if hung else
                   f"the test process died (exit status {process.returncode}) while it ran")
            if "::" in victim:     # run again the tests that have no result yet
                result.tests[victim] = {"outcome": "failed", "markers": result.collected.get(victim, []),
                                        "exc_type": "Crash", "message": why, "output": why, "duration": 0.0}
                targets = [n for n in result.collected if n not in result.tests]
                if not targets:
                    return result
            elif victim in ignored:
                result.problems.append(f"{victim}: pytest keeps dying while it collects this file")
                return result
            else:                  # collecting a file hung or crashed: run everything but that file
                result.collect_errors[victim] = f"collecting {victim}: {why}"
                ignored.append(victim)


def _watch(process, log, limit):
    """Wait for ``process``; kill its process group when one test stays open longer than ``limit``
    seconds. Returns True if it had to kill."""
    open_since, seen = None, 0
    while process.poll() is None:
        time.sleep(0.1)
        if os.path.exists(log):
            with open(log, encoding="utf-8") as f:
                lines = f.readlines()
            if len(lines) != seen:
                seen = len(lines)
                last = _parse(lines[-1])
                open_since = time.monotonic() if last and last["event"] == "begin" else None
        if open_since is not None and time.monotonic() - open_since > limit:
            with contextlib.suppress(ProcessLookupError):     # it may have ended just now
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return True
    return False


def _parse(line):
    try:
        return json.loads(line)
    except json.JSONDecodeError:     # a line cut short by a crash
        return None


def _read(log, result):
    """Fold the log into ``result``; returns {nodeid: "open" or "done"} of this attempt."""
    begun = {}
    if not os.path.exists(log):
        return begun
    with open(log, encoding="utf-8") as f:
        for record in filter(None, map(_parse, f)):
            nodeid = record.pop("nodeid")
            if record["event"] == "item":      # collection is over: no file is still being collected
                result.collected[nodeid] = record["markers"]
                begun.update({n: "collected" for n, state in begun.items() if state == "open"})
                continue
            if record["event"] == "begin":
                begun[nodeid] = "open"
                continue
            begun[nodeid] = "done" if record["kind"] == "test" else "collected"
            if record["kind"] == "collect":
                if record["outcome"] == "failed":
                    result.collect_errors[nodeid] = record["output"]
            else:
                del record["event"], record["kind"]
                result.tests[nodeid] = record
    return begun
