"""The process a submission runs in: it runs probes and sends their data, nothing else.

``python -I worker.py SPEC`` (started by ``sandbox``; the spec is a JSON file) does, in order:

1. ``sys.path``: the submission's folder, a private copy of the library (no ``exercises/`` in it,
   so no solution can be imported), and the interpreter's own standard library and site-packages.
2. Imports NumPy, the library and the case file while nothing of the student's has run.
3. Tripwires: every library function or class the exercise forbids is wrapped so that a call
   *from the submission's files* raises ``ForbiddenUse`` and is reported.
4. An audit hook (``sys.addaudithook``: it cannot be removed) that refuses, from here on, what a
   probe never needs: starting processes, signals to other processes, sockets, ctypes, compiling
   or executing code that is not a file of the submission or the library, reading the teacher's
   files, writing outside this run's scratch folder, and importing a forbidden module.
5. Imports the student's modules, then runs each probe with a time limit and writes one JSON line
   per event to the pipe ``fd``: ``{"begin": name}``, then ``{"end": name, "data": ...}`` or
   ``{"end": name, "error": ...}``. The submission can write to that pipe as well; the grader does
   not care, because a line can only carry data, and data is judged on the grader's side.

Only the standard library, NumPy and the library are imported here.
"""
import functools
import importlib
import importlib.util
import json
import os
import signal
import sys
import sysconfig
import traceback

SPAWN = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
         "os.forkpty", "os.kill", "os.killpg", "signal.pthread_kill", "pty.spawn", "os.startfile")
REFUSED_PREFIXES = ("socket.", "ctypes.", "sys.settrace", "sys.setprofile", "sys.remote_exec",
                    "code.__new__", "pickle.find_class", "winreg.")
WRITES = {"os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.symlink",
          "os.link", "os.truncate", "os.utime", "shutil.rmtree", "shutil.move", "shutil.copyfile",
          "os.chflags", "os.lchown", "os.mkfifo", "os.mknod"}
READS = {"os.listdir", "os.scandir", "glob.glob", "os.walk"}


class ForbiddenUse(BaseException):
    """The submission called what its exercise forbids (BaseException: ``except Exception`` in
    the student's code does not swallow it)."""


def main(spec_path):
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    out = spec["fd"]
    sys.path[:] = [spec["submission"], spec["library"]] + [p for p in sys.path if _is_interpreter_path(p)]
    sys.meta_path[:] = [f for f in sys.meta_path if not type(f).__module__.startswith("__editable__")]
    os.chdir(spec["scratch"])
    import numpy                                      # noqa: F401  (loaded before the student's code)
    import minishare                                  # noqa: F401
    from minishare.exercises.cases import decode, encode
    cases = _load_cases(spec["cases"])
    breaches = []
    current = {"task": None}
    for name, tasks in spec["forbid"].items():
        _tripwire(name, tasks, spec["submission"], current, breaches)
    roots = _Roots(spec)
    sys.addaudithook(functools.partial(_audit, roots=roots, forbidden=spec["forbidden_modules"],
                                       breaches=breaches))
    try:
        modules = {name: importlib.import_module(name) for name in spec["modules"]}
        failure = None
    except BaseException as err:                      # noqa: BLE001  (any error is the submission's)
        modules, failure = {}, _describe(err, spec["submission"])
    _send(out, {"imported": True, "breaches": breaches[:]})   # these cost every task
    for name in spec["run"]:
        graded, since = cases[name], len(breaches)
        _send(out, {"begin": name})
        current["task"] = graded.marker
        if failure is not None:
            _send(out, {"end": name, "error": f"the module does not import: {failure}", "breaches": []})
            continue
        try:
            with _time_limit(spec["timeouts"][name]):
                given = decode(spec["given"][name]) if name in spec["given"] else None
                data = graded.call([modules[m] for m in graded.modules], given)
            _send(out, {"end": name, "data": json.loads(encode(data)), "breaches": breaches[since:]})
        except BaseException as err:                  # noqa: BLE001
            _send(out, {"end": name, "error": _describe(err, spec["submission"]), "breaches": breaches[since:]})
        finally:
            current["task"] = None
    _send(out, {"done": True})
    os._exit(0)                                       # no atexit handler of the student's runs


def _send(fd, record):
    os.write(fd, (json.dumps(record) + "\n").encode("utf-8"))


def _is_interpreter_path(path):
    """The standard library and site-packages (numpy, pytest), not the current folder or a source
    checkout that an editable install or PYTHONPATH put on the path."""
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    real = os.path.realpath(path) if path else ""
    return bool(path) and any(real == p or real.startswith(p + os.sep) for p in prefixes) \
        and not os.path.isdir(os.path.join(real, "exercises"))


def _load_cases(path):
    spec = importlib.util.spec_from_file_location("graded_cases", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from minishare.exercises.cases import cases_of
    return {c.name: c for c in cases_of(module)}


def _tripwire(dotted, tasks, submission, current, breaches, home=None):
    """Wrap the library object ``dotted`` so that a call from the submission's files raises, in a
    case of one of ``tasks`` (all tasks when empty). ``home``: the class that defines an inherited
    method (the wrapper is set on the forbidden class, shadowing it there only)."""
    owner, attribute, target = resolve(dotted)
    if target is None:
        return
    if isinstance(target, type(sys)):                 # a module or package: every function and
        for name, module in list(sys.modules.items()):  # class defined in it or its submodules
            if module is None or not (name == target.__name__ or name.startswith(target.__name__ + ".")):
                continue
            for key, value in list(vars(module).items()):
                if getattr(value, "__module__", None) == name and callable(value):
                    _tripwire(f"{name}.{key}", tasks, submission, current, breaches)
        return
    if isinstance(target, type):
        # A class: its own methods, and the class-level entry points it inherits (an op's
        # ``apply`` comes from Function); not the instance methods of a base class, which a
        # model that a probe hands to the submission uses legitimately (``parameters()``).
        for key in dir(target):
            home = next((k for k in target.__mro__ if key in vars(k)), None)
            value = vars(home)[key] if home is not None else None
            if home is None or not home.__module__.startswith("minishare") or key in ("__new__", "__init_subclass__"):
                continue
            own = home is target and callable(value) and not isinstance(value, type)
            if own or isinstance(value, (staticmethod, classmethod)):
                _tripwire(f"{dotted}.{key}", tasks, submission, current, breaches, home)
        return
    raw = vars(home or owner).get(attribute, target) if isinstance(owner, type) else target
    function = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
    if not callable(function):
        return

    @functools.wraps(function)
    def guarded(*args, **kwargs):
        caller = sys._getframe(1).f_code.co_filename
        if _in_folder(caller, submission) and (not tasks or current["task"] in tasks):
            breaches.append(f"{dotted} called ({os.path.basename(caller)})")
            raise ForbiddenUse(f"{dotted} may not be used in this exercise")
        return function(*args, **kwargs)

    wrapped = type(raw)(guarded) if isinstance(raw, (staticmethod, classmethod)) else guarded
    setattr(owner, attribute, wrapped)


@functools.lru_cache(maxsize=None)
def _in_folder(filename, folder):
    return os.path.realpath(filename).startswith(folder + os.sep)


def resolve(dotted):
    """(owner, attribute, object) of an importable dotted name, or (None, None, None)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        owner, attribute = None, None
        for part in parts[cut:]:
            owner, attribute, obj = obj, part, getattr(obj, part, None)
            if obj is None:
                return None, None, None
        if owner is None:                             # the dotted name is a module
            owner, attribute = sys.modules.get(".".join(parts[:-1])), parts[-1]
        return owner, attribute, obj
    return None, None, None


class _Roots:
    """Where the submission may read and write."""

    def __init__(self, spec):
        real = os.path.realpath
        self.submission = real(spec["submission"])
        paths = sysconfig.get_paths()
        self.stdlib = [real(paths[k]) for k in ("stdlib", "platstdlib")]
        self.site = [real(paths[k]) for k in ("purelib", "platlib")]     # NumPy's own code is not stdlib
        self.write = [real(spec["scratch"])]
        self.code = [real(spec["submission"]), real(spec["library"])] + \
            [real(p) for p in sys.path if _is_interpreter_path(p)]
        self.read = self.write + self.code + [real(p) for p in (sys.prefix, sys.base_prefix)] + ["/dev/null"]
        self.deny = [real(p) for p in spec["deny"]]

    @staticmethod
    def _under(path, roots):
        return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)

    def check_read(self, path):
        path = os.path.realpath(path)
        if self._under(path, self.deny) or not self._under(path, self.read):
            raise PermissionError(f"the grader does not let a submission read {path}")

    def check_write(self, path):
        path = os.path.realpath(path)
        if self._under(path, self.deny) or not self._under(path, self.write):
            raise PermissionError(f"the grader does not let a submission write {path}")

    def check_code(self, filename, source=None):
        """Code may come from the files of the submission, the library and the interpreter only;
        compiled source must be that file's content (not a string read from elsewhere)."""
        if isinstance(filename, str) and filename.startswith("<frozen ") and source is None:
            return
        real = os.path.realpath(filename) if isinstance(filename, str) else None
        if real is None or not self._under(real, self.code) or self._under(real, self.deny):
            raise PermissionError(f"the grader does not let a submission compile or run code from {filename!r}")
        if source is not None:
            with open(real, "rb") as f:
                content = f.read()
            if (source.encode("utf-8") if isinstance(source, str) else source) != content:
                raise PermissionError(f"the grader does not let a submission compile a string as {filename!r}")


def _audit(event, args, roots, forbidden, breaches):
    if event.startswith("marshal.load") and not sys._getframe(1).f_code.co_filename.startswith("<frozen importlib"):
        breaches.append(f"{event} refused")           # (the import system reads .pyc files with it)
        raise PermissionError(f"the grader does not let a submission use {event}")
    if event in SPAWN or event.startswith(REFUSED_PREFIXES):
        breaches.append(f"{event} refused")
        raise PermissionError(f"the grader does not let a submission use {event}")
    if event == "open":
        path, mode, flags = args[0], args[1] or "r", args[2] or 0
        if isinstance(path, int):
            return
        path = os.fsdecode(path)
        writes = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
        if any(c in str(mode) for c in "wax+") or flags & writes:
            roots.check_write(path)
        else:
            roots.check_read(path)
    elif event in WRITES:
        for path in args:
            if isinstance(path, (str, bytes, os.PathLike)):
                roots.check_write(os.fsdecode(path))
    elif event in READS and args and isinstance(args[0], (str, bytes, os.PathLike)):
        roots.check_read(os.fsdecode(args[0]))
    elif event in ("compile", "exec") and _asked_by(roots.submission, roots.stdlib, roots.site):
        if event == "compile":
            roots.check_code(args[1], args[0] if isinstance(args[0], (str, bytes)) else b"<not source>")
        else:
            roots.check_code(getattr(args[0], "co_filename", None))
    elif event == "import":
        name = args[0]
        if any(name == m or name.startswith(m + ".") for m in forbidden) and _imported_by(roots.submission):
            breaches.append(f"import of {name} refused")
            raise ImportError(f"{name} may not be imported in this exercise")


def _asked_by(folder, stdlib, site):
    """Whether the nearest caller outside the standard library is a file of ``folder``: the
    submission compiling or running code, itself or through ``timeit`` and the like, and not the
    library (``dataclasses`` compiles the methods of the library's configs)."""
    frame = sys._getframe(2)
    while frame is not None and (frame.f_code.co_filename.startswith("<") or (
            _Roots._under(os.path.realpath(frame.f_code.co_filename), stdlib)
            and not _Roots._under(os.path.realpath(frame.f_code.co_filename), site))):
        frame = frame.f_back
    return frame is None or os.path.realpath(frame.f_code.co_filename).startswith(folder + os.sep)


def _imported_by(folder):
    """Whether the import under way is written in a file of ``folder`` (the library may import
    what the submission may not)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
        frame = frame.f_back
    return frame is not None and os.path.realpath(frame.f_code.co_filename).startswith(folder + os.sep)


class _time_limit:
    """SIGALRM after ``seconds`` (a Python loop that never ends fails this case); the parent kills
    the process if the alarm cannot interrupt (C code) or is swallowed."""

    def __init__(self, seconds):
        self.seconds = seconds

    def __enter__(self):
        def expire(signum, frame):
            raise TimeoutError(f"the case ran longer than {self.seconds:g} s")
        signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, self.seconds, 0.5)

    def __exit__(self, *exc):
        signal.setitimer(signal.ITIMER_REAL, 0)


def _describe(err, submission):
    """The error and the submission's own lines of its traceback (the library's are noise)."""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename.startswith(submission)]
    where = "".join(f"\n  {os.path.basename(f.filename)}:{f.lineno} in {f.name}: {f.line}" for f in frames[-3:])
    return f"{type(err).__name__}: {str(err)[:2000]}{where}"


if __name__ == "__main__":
    main(sys.argv[1])
