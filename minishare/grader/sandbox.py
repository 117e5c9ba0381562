"""Running probes beside a submission, in a process that cannot reach the grade.

``run(files, cases_file, names, ...)`` copies the submission's files, the case file and a private
copy of the library into a fresh folder, starts ``worker.py`` there and reads back one record per
case: its data or its error. What keeps the grade out of the submission's reach:

* **Another process, another user.** When the grader runs as root (as on Gradescope), the worker
  runs as an unprivileged user (``MINISHARE_GRADER_USER``, default ``nobody``), which can read the
  copies it is given and write only its own scratch folder; the teacher's files and the results
  are root's. When that user cannot run this Python (a root-only install), the grader refuses to
  grade, with the fix, unless the teacher allows root for a local test (``allow_root``). A grader
  that is not root runs workers as its own user. Either way the worker then locks itself in with
  the kernel's Landlock where the kernel has it (``worker``), and its audit hook guards the rest;
  ``Sandbox.note`` tells the teacher which.
* **Nothing outlives a grade.** The worker starts its own session; when it ends, its process group
  is killed, and every process of the unprivileged user started since, but for the sessions of
  workers still running beside it. The grader is its children's *subreaper* (Linux), so a process
  that leaves its session and its parent is still the grader's descendant: ``sweep`` kills every
  one, and ``grade`` sweeps before and after it writes ``results.json``.
* **Limits.** Address space, file size, core dumps and processes are capped (``resource``); a case
  that runs past its time is killed with its process, and the worker starts again with the cases
  that have not run, so a hang or a crash costs only the case it happens in.
* **Data only.** Records are JSON lines read with a size limit; the grader judges them itself.
"""
import dataclasses
import json
import math
import os
import pwd
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from minishare.grader import cases, probes

MAX_OUTPUT = 64 * 2 ** 20             # bytes a worker may send in all
MEMORY = 6 * 2 ** 30                  # address space of the worker
FILE_SIZE = 64 * 2 ** 20
STARTUP = 60.0                        # seconds to import NumPy, the library and the submission


@dataclasses.dataclass
class Result:
    records: dict            # case name -> {"data": ...} or {"error": "..."}, and "breaches": [...]
    breaches: list           # what was refused while the submission's modules imported


class Sandbox:
    """Where workers run: the library copy, and the user they run as."""

    def __init__(self, deny=(), user=None, allow_root=False):
        self.started = time.time()
        _become_subreaper()
        self.root = tempfile.mkdtemp(prefix="minishare-sandbox-")
        os.chmod(self.root, 0o711)          # a worker reaches its own run by name, lists no other
        self.library = os.path.join(self.root, "lib")
        package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        shutil.copytree(package, os.path.join(self.library, "minishare"),
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        _readable(self.library)
        self.deny = [os.path.realpath(p) for p in deny]
        self.uid, self.gid, self.user_note = _choose_user(user, self.library, allow_root)
        self.landlock = None             # whether the last worker locked itself in (None: none ran yet)
        self._running = set()            # pids of the workers alive now (each leads its session)
        self._lock = threading.Lock()

    @property
    def note(self):
        """For the teacher: who submissions run as, and whether the kernel locked them in."""
        lock = {True: "; Landlock on", False: "; no Landlock in this kernel (the audit hook guards files)",
                None: ""}[self.landlock]
        return self.user_note + lock

    def close(self):
        shutil.rmtree(self.root, ignore_errors=True)

    def sweep(self):
        """Kill every descendant of the grader started since this sandbox, but for the workers
        running now; returns a note for the teacher for each process that had to be killed."""
        notes = []
        for _ in range(10):                  # a process may fork while it is being killed
            with self._lock:
                found = [(pid, name) for pid, name in _descendants(os.getpid(), self.started)
                         if pid not in self._running]
            if not found:
                break
            for pid, name in found:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            notes += [f"a process the submission started outlived its case and was killed: {name} (pid {pid})"
                      for pid, name in found]
            time.sleep(0.05)
            _reap()
        return notes

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def run(self, files, cases_file, names, modules, forbid, forbidden_modules, timeouts, given=None,
            cpu_seconds=None):
        """Run the cases ``names`` of ``cases_file`` on the submission ``files`` ({file name:
        bytes}); ``timeouts`` {name: seconds}; ``given`` {name: the case's inputs as plain data};
        ``cpu_seconds``: the kernel's limit on each worker's CPU time, every thread's (None: none).
        The worker gets the case file's probes only (``probes.probe_source``). Returns a ``Result``."""
        run_dir = tempfile.mkdtemp(dir=self.root, prefix="run-")
        os.chmod(run_dir, 0o755)
        try:
            submission = os.path.join(run_dir, "submission")
            scratch = os.path.join(run_dir, "scratch")
            os.makedirs(submission)
            os.makedirs(scratch)
            for name, content in files.items():
                with open(os.path.join(submission, name), "wb") as f:
                    f.write(content)
            probe_file = os.path.join(run_dir, "cases", os.path.basename(cases_file))
            os.makedirs(os.path.dirname(probe_file))
            with open(cases_file, encoding="utf-8") as f:
                text = probes.probe_source(f.read(), cases_file)
            with open(probe_file, "w", encoding="utf-8") as f:
                f.write(text)
            _readable(run_dir)
            os.chmod(run_dir, 0o711)
            if self.uid is not None:
                os.chown(scratch, self.uid, self.gid)
            result = Result({}, [])
            remaining = list(names)
            while remaining:
                spec = dict(submission=os.path.realpath(submission), library=self.library,
                            scratch=os.path.realpath(scratch), cases=probe_file, run=remaining,
                            modules=list(modules), forbid=forbid, timeouts=timeouts, forbidden_modules=list(forbidden_modules),
                            deny=self.deny, given={n: cases.encode(g) for n, g in (given or {}).items()})
                remaining = self._attempt(spec, run_dir, timeouts, result, cpu_seconds)
            return result
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)

    def _attempt(self, spec, run_dir, timeouts, result, cpu_seconds=None):
        """One worker process; returns the cases still to run after it ended."""
        read, write = os.pipe()
        spec["fd"] = write
        spec_path = os.path.join(run_dir, "spec.json")
        with open(spec_path, "w", encoding="utf-8") as f:
            json.dump(spec, f)
        os.chmod(spec_path, 0o644)
        started = time.time()
        errors = open(os.path.join(run_dir, "stderr.txt"), "w+b")    # a file: a pipe could fill and block
        with self._lock:                 # no sweep between the start and the record of it
            process = subprocess.Popen(
                [sys.executable, "-I", os.path.join(self.library, "minishare", "grader", "worker.py"), spec_path],
                cwd=spec["scratch"], env=_environment(spec["scratch"]), pass_fds=(write,),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors,
                start_new_session=True, preexec_fn=_limits(self.uid is not None, cpu_seconds),
                **({"user": self.uid, "group": self.gid, "extra_groups": []} if self.uid is not None else {}))
            self._running.add(process.pid)
        os.close(write)
        try:
            open_case, why, pending = self._read(process, read, spec["run"], timeouts, result)
        finally:
            os.close(read)
            with self._lock:
                self._running.discard(process.pid)
            self._kill(process, started)
        errors.seek(max(0, os.fstat(errors.fileno()).st_size - 2000))
        stderr = errors.read().decode("utf-8", "replace")
        errors.close()
        done = [n for n in spec["run"] if n in result.records]
        if open_case is None:
            left = [n for n in spec["run"] if n not in result.records]
            if left:                    # the worker died before its first case: nothing will run
                reason = why or f"the test process ended (exit status {process.returncode}) before the cases ran"
                detail = stderr.strip().splitlines()[-1:] if stderr.strip() else []
                for name in left:
                    result.records[name] = {"error": reason + (f": {detail[0]}" if detail else "")}
            return []
        result.records[open_case] = {"error": why or f"the test process died (exit status "
                                              f"{process.returncode}) while this case ran", "breaches": pending}
        return [n for n in spec["run"] if n not in result.records and n not in done]

    def _read(self, process, fd, names, timeouts, result):
        """Fold the worker's records into ``result`` until it ends or a case overstays. Returns
        (the case open when it stopped or None, why it was stopped, that case's breaches). A
        breach counts against the case open when it arrives, or, before any, every task."""
        buffer, total, open_case, pending = b"", 0, None, []
        deadline = time.monotonic() + STARTUP
        while True:
            wait = deadline - time.monotonic()
            if wait <= 0:
                why = (f"the case ran longer than {timeouts[open_case] + 5:g} s and was stopped"
                       if open_case else f"the module did not import within {STARTUP:g} s")
                return open_case, why, pending
            ready, _, _ = select.select([fd], [], [], min(wait, 1.0))
            if not ready:
                if process.poll() is not None and not _pending(fd):
                    return open_case, None, pending
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                process.wait()
                return open_case, None, pending
            total += len(chunk)
            if total > MAX_OUTPUT:
                return open_case, f"the test process sent more than {MAX_OUTPUT // 2 ** 20} MiB", pending
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                record = _parse(line)
                if record is None:
                    continue
                if "breach" in record:
                    said = str(record["breach"])[:300]
                    if open_case is not None:
                        pending.append(said)
                    elif said not in result.breaches:
                        result.breaches.append(said)
                elif record.get("imported"):
                    self.landlock = bool(record.get("landlock"))
                elif record.get("begin") in names and record["begin"] not in result.records:
                    open_case, pending = record["begin"], []
                    deadline = time.monotonic() + timeouts[open_case] + 5
                elif record.get("end") == open_case and open_case is not None:
                    result.records[open_case] = ({"data": record["data"]} if "data" in record
                                                 else {"error": str(record.get("error"))[:4000]})
                    result.records[open_case]["breaches"] = pending
                    open_case, pending = None, []
                    deadline = time.monotonic() + STARTUP
                elif record.get("done"):
                    process.wait()
                    return None, None, []

    def _kill(self, process, started):
        """The worker's group, and every process of the sandbox user started since ``started``."""
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        process.wait()
        if self.uid is None:
            return
        with self._lock:                 # the sessions of workers still running are theirs
            for pid, session in _processes_of(self.uid, since=started - 1):
                if session not in self._running:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass


def _parse(line):
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def _pending(fd):
    return bool(select.select([fd], [], [], 0)[0])


def _environment(scratch):
    env = {"PATH": "/usr/bin:/bin", "HOME": scratch, "LANG": "C.UTF-8", "MPLBACKEND": "Agg",
           "MINISHARE_BACKEND": "numpy", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    return env


def _limits(unprivileged, cpu_seconds=None):
    def apply():
        import resource
        for limit, value in ((resource.RLIMIT_AS, MEMORY), (resource.RLIMIT_FSIZE, FILE_SIZE),
                             (resource.RLIMIT_CORE, 0)) + (((resource.RLIMIT_NPROC, 256),) if unprivileged else ()):
            soft, hard = resource.getrlimit(limit)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(limit, (value, value))
        if cpu_seconds is not None:     # SIGXCPU at the limit, SIGKILL a second later if it is ignored
            seconds = max(1, math.ceil(cpu_seconds))
            resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
    return apply


def _readable(top):
    for directory, _, files in os.walk(top):
        os.chmod(directory, 0o755)
        for name in files:
            os.chmod(os.path.join(directory, name), 0o644)


def _choose_user(user, library, allow_root):
    """(uid, gid, note): the unprivileged user workers run as, or (None, None, why not); raises
    RuntimeError when the grader is root, no user can run the worker and root is not allowed."""
    if os.geteuid() != 0:
        return None, None, "the grader is not root: submissions run as its own user, in the worker's Landlock and audit hook"
    name = user or os.environ.get("MINISHARE_GRADER_USER") or "nobody"

    def refuse(why):
        if allow_root:
            return None, None, f"{why}: submissions run as root (allowed for this local test)"
        raise RuntimeError(f"{why}, and the grader will not run submissions as root. Fix: install a Python "
                           "that user can run (for example a virtual environment from /usr/bin/python3 outside "
                           "/root) and grade with it, or name a working user in MINISHARE_GRADER_USER; for a "
                           "local test of your own files only, pass --allow-root")
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return refuse(f"user {name!r} does not exist")
    try:
        probe = subprocess.run([sys.executable, "-I", "-c", "import numpy, sys; sys.path.insert(0, sys.argv[1]); "
                                "import minishare", library], user=entry.pw_uid, group=entry.pw_gid,
                               extra_groups=[], capture_output=True, cwd="/", timeout=120)
        works = probe.returncode == 0
    except OSError:
        works = False
    if not works:
        return refuse(f"user {name!r} cannot run {sys.executable} with NumPy (a Python under a root-only folder?)")
    return entry.pw_uid, entry.pw_gid, f"submissions run as user {name!r}"


def _become_subreaper():
    """Orphans of the grader's descendants become the grader's children, not init's (Linux's
    PR_SET_CHILD_SUBREAPER): a process that leaves its session can still be found and killed."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)     # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def _reap():
    """Collect the killed orphans that became the grader's children (zombies otherwise)."""
    for pid, _, parent, _, _, state in _process_table():
        if parent == os.getpid() and state == "Z":
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass


def _descendants(root_pid, since):
    """[(pid, command name)] of the descendants of ``root_pid`` started after ``since``."""
    table = {pid: (parent, started, name, state) for pid, _, parent, started, name, state in _process_table()}
    found = []
    for pid, (parent, started, name, state) in table.items():
        ancestor, hops = parent, 0
        while ancestor not in (root_pid, 0, 1) and ancestor in table and hops < 64:
            ancestor, hops = table[ancestor][0], hops + 1
        if ancestor == root_pid and started >= since - 1 and state != "Z":
            found.append((pid, name))
    return found


def _processes_of(uid, since):
    """(pid, session id) of the processes of ``uid`` started after ``since`` (seconds since the epoch)."""
    return [(pid, session) for pid, session, _, started, _, _ in _process_table(uid) if started >= since]


def _process_table(uid=None):
    """(pid, session, parent pid, start time in seconds since the epoch, name, state) of each
    process (of ``uid`` only, when given), read from /proc."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            boot = next(float(line.split()[1]) for line in f if line.startswith("btime"))
    except (OSError, StopIteration):
        return []
    ticks = os.sysconf("SC_CLK_TCK")
    rows = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if uid is not None and os.stat(f"/proc/{entry}").st_uid != uid:
                continue
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                head, tail = f.read().rsplit(")", 1)
            fields = tail.split()
            rows.append((int(entry), int(fields[3]), int(fields[1]), boot + int(fields[19]) / ticks,
                         head.split("(", 1)[1][:40], fields[0]))
        except (OSError, IndexError, ValueError):
            continue
    return rows
