"""Judging under limits: the teacher's judges run in a process of the grader's own, one case at a time.

A judge is the teacher's code, but the data it reads is the submission's: a number that makes
a judge build a list of 10^8 items, or loop for a minute, must cost that case, not the grade.
So the grader hands each verdict to a judge process (``python judging.py``) with an address-space
limit, and waits at most ``timeout`` seconds for its answer; past that, or if the process dies,
it is killed, the case scores zero with the reason, and the next case starts a fresh process.

The protocol is one JSON line each way: ``{"cases": path, "name": case, "out": data, "ref":
data, "given": data}`` in, ``{"passed": bool, "output": text}`` out.
"""
import json
import os
import select
import subprocess
import sys
import threading

MEMORY = 4 * 2 ** 30              # address space of the judge process
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Judges:
    """The grader's side: ``verdict(...)`` asks the judge process, restarting it as needed."""

    def __init__(self):
        self._process = None
        self._lock = threading.Lock()

    def verdict(self, cases_file, name, out, ref, given, timeout):
        """(passed, output) of case ``name`` of ``cases_file`` on the data ``out`` (JSON-ready)."""
        request = json.dumps({"cases": cases_file, "name": name, "out": out, "ref": ref, "given": given}) + "\n"
        with self._lock:
            process = self._start()
            try:
                process.stdin.write(request.encode("utf-8"))
                process.stdin.flush()
                ready, _, _ = select.select([process.stdout], [], [], timeout)
                line = process.stdout.readline() if ready else b""
            except (BrokenPipeError, OSError):
                line = b""
            if line:
                answer = json.loads(line)
                return bool(answer["passed"]), str(answer["output"])
            self._stop()
            why = (f"the grader stopped judging this case after {timeout:g} s" if not ready else
                   "judging this case ran out of the grader's memory limit")
            return False, f"wrong: {why} (what the submission returned makes the judge work without end)"

    def _start(self):
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, "-I", os.path.abspath(__file__), PACKAGE_PARENT],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                env={"PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
                     "MKL_NUM_THREADS": "1", "MINISHARE_BACKEND": "numpy", "MPLBACKEND": "Agg"},
                preexec_fn=_limit_memory)
        return self._process

    def _stop(self):
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None

    def close(self):
        with self._lock:
            self._stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _limit_memory():
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    value = MEMORY if hard == resource.RLIM_INFINITY else min(MEMORY, hard)
    resource.setrlimit(resource.RLIMIT_AS, (value, value))


def serve():
    """The judge process: answer requests until stdin closes."""
    import importlib.util
    from minishare.grader import cases
    loaded = {}
    for line in sys.stdin.buffer:
        request = json.loads(line)
        path = request["cases"]
        if path not in loaded:
            spec = importlib.util.spec_from_file_location(f"judged_{len(loaded)}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            loaded[path] = {c.name: c for c in cases.cases_of(module)}
        graded = loaded[path][request["name"]]
        try:
            graded.verdict(cases.rebuild(request["out"]), cases.rebuild(request["ref"]),
                           cases.rebuild(request["given"]))
            answer = {"passed": True, "output": ""}
        except AssertionError as err:
            answer = {"passed": False, "output": f"wrong: {err}"}
        except MemoryError:
            answer = {"passed": False, "output": "wrong: judging this case ran out of the grader's memory limit "
                                                 "(what the submission returned makes the judge work without end)"}
        except Exception as err:          # noqa: BLE001  (the data is the submission's: anything)
            answer = {"passed": False, "output": f"wrong: the result could not be judged ({type(err).__name__}: "
                                                 f"{str(err)[:2000]})"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    sys.path.insert(0, sys.argv[1])
    serve()
