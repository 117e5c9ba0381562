"""The process a submission runs in: it runs probes and sends their data, nothing else.

``python -I worker.py SPEC`` (started by ``sandbox``; the spec is a JSON file) does, in order:

1. ``sys.path``: the submission's folder, a private copy of the library (no ``exercises/`` in it,
   so no solution can be imported), and the interpreter's own standard library and site-packages.
2. Imports NumPy, the library and the file of probes while nothing of the student's has run. That
   file holds probes only (``probes``): no judge, reference helper or expected value is in this
   process, so there is nothing here a submission could read or call to learn an answer.
3. Landlock (Linux 5.13 and later, any user): from here on the kernel lets this process and its
   children read only the submission, the library, the interpreter and this run's scratch folder,
   write only the scratch folder, execute nothing, open no TCP connection and signal no process
   outside. A submission cannot undo it; where the kernel lacks it, the next two guards remain.
4. Tripwires: every library function or class the exercise forbids is replaced by an opaque
   wrapper (no ``__wrapped__``, no closure to read) that raises ``ForbiddenUse`` when the first
   frame above it outside the standard library and site-packages is a file of the submission,
   or a library frame that was handed the function by the submission (its code does not name it).
5. An audit hook (``sys.addaudithook``: it cannot be removed) that refuses, from here on, what a
   probe never needs: starting processes, signals to other processes, sockets, ctypes; frames,
   the garbage collector's object lists and signal handlers (the ways to reach this process's
   own state), also when the submission has the library make the call; compiling or executing
   code that is not a file of the submission or the library, or a module already loaded again (a
   fresh copy would have no tripwires); reading the teacher's files, writing outside this run's
   scratch folder, and importing a forbidden module.

The guards decide with what ``_guards`` captured when the worker started (closures over
immutable values and the interpreter's own functions), never with a module global a submission
could rebind. Each refusal is sent to the grader at once, and the grader decides what it costs.

6. Imports the student's modules, then runs each probe with a time limit and writes one JSON line
   per event to the pipe ``fd``: ``{"begin": name}``, then ``{"end": name, "data": ...}`` or
   ``{"end": name, "error": ...}``, and ``{"breach": what}`` whenever a guard refuses. The
   submission can write to that pipe as well; the grader does not care, because a line can only
   carry data, and data is judged on the grader's side.

Only the standard library, NumPy and the library are imported here.
"""
import _thread
import builtins
import functools
import importlib
import importlib.util
import json
import os
import posix
import signal
import sys
import sysconfig
import traceback
import types

SPAWN = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
         "os.forkpty", "os.kill", "os.killpg", "signal.pthread_kill", "pty.spawn", "os.startfile")
REFUSED_PREFIXES = ("socket.", "ctypes.", "sys.settrace", "sys.setprofile", "sys.remote_exec",
                    "code.__new__", "pickle.find_class", "winreg.")
# ways to reach this process's own state (frames, and objects by the collector's lists)
INTROSPECTION = ("sys._getframe", "sys._current_frames", "sys._current_exceptions", "sys._getframemodulename",
                 "gc.get_objects", "gc.get_referrers", "gc.get_referents")
FRAME_ATTRIBUTES = ("tb_frame", "gi_frame", "cr_frame", "ag_frame")   # the ones Python audits
WRITES = ("os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.symlink",
          "os.link", "os.truncate", "os.utime", "shutil.rmtree", "shutil.move", "shutil.copyfile",
          "os.chflags", "os.lchown", "os.mkfifo", "os.mknod")
READS = ("os.listdir", "os.scandir", "glob.glob", "os.walk")


class ForbiddenUse(BaseException):
    """The submission called what its exercise forbids (BaseException: ``except Exception`` in
    the student's code does not swallow it)."""


def main(spec_path):
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    send = _sender(spec["fd"])
    sys.dont_write_bytecode = True                    # (-I ignores PYTHONDONTWRITEBYTECODE)
    sys.path[:] = [spec["submission"], spec["library"]] + [p for p in sys.path if _is_interpreter_path(p)]
    sys.meta_path[:] = [f for f in sys.meta_path if not type(f).__module__.startswith("__editable__")]
    os.chdir(spec["scratch"])
    import numpy                                      # noqa: F401  (loaded before the student's code)
    import minishare                                  # noqa: F401
    from minishare.grader import landlock
    from minishare.grader.cases import decode, encode
    cases = _load_cases(spec["cases"])
    current = [None]                                  # the task of the case running now
    roots = _roots(spec)
    locked = landlock.restrict(roots["read"] + landlock.SYSTEM, roots["write"])
    audit, tripwire, frame_of, seal = _guards(roots, spec["forbidden_modules"], send, current)
    for name, tasks in spec["forbid"].items():
        _tripwire(name, frozenset(tasks), tripwire)
    _lock_signal_handlers(frame_of, roots["submission"], send)
    seal()
    sys.addaudithook(audit)
    del audit, tripwire, frame_of, seal               # only the interpreter and the wrappers hold them
    try:
        modules = {name: importlib.import_module(name) for name in spec["modules"]}
        failure = None
    except BaseException as err:                      # noqa: BLE001  (any error is the submission's)
        modules, failure = {}, _describe(err, spec["submission"])
    send({"imported": True, "landlock": locked})
    for name in spec["run"]:
        graded = cases[name]
        send({"begin": name})
        current[0] = graded.marker
        if failure is not None:
            send({"end": name, "error": f"the module does not import: {failure}"})
            continue
        try:
            with _time_limit(spec["timeouts"][name]):
                given = decode(spec["given"][name]) if name in spec["given"] else None
                data = graded.call([modules[m] for m in graded.modules], given)
            send({"end": name, "data": json.loads(encode(data))})
        except BaseException as err:                  # noqa: BLE001
            send({"end": name, "error": _describe(err, spec["submission"])})
        finally:
            current[0] = None
    send({"done": True})
    os._exit(0)                                       # no atexit handler of the student's runs


def _sender(fd):
    """``send(record)``: one JSON line to the grader. A line starts with a newline as well, so
    that bytes the submission wrote to the pipe without one cannot swallow it."""
    write = os.write

    def send(record, raw=None):
        write(fd, b"\n" + (raw if raw is not None else json.dumps(record)).encode("utf-8") + b"\n")
    return send


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
    from minishare.grader.cases import cases_of
    return {c.name: c for c in cases_of(module)}


def _tripwire(dotted, tasks, tripwire, home=None):
    """Replace the library object ``dotted`` by ``tripwire(dotted, tasks, function)``, which
    refuses a call from the submission's files in a case of one of ``tasks`` (all tasks when
    empty). ``home``: the class that defines an inherited method (the wrapper is set on the
    forbidden class, shadowing it there only)."""
    owner, attribute, target = resolve(dotted)
    if target is None:
        return
    if isinstance(target, type(sys)):                 # a module or package: every function and
        inside = lambda name: name == target.__name__ or name.startswith(target.__name__ + ".")  # noqa: E731
        for name, module in list(sys.modules.items()):  # class defined in it or its submodules
            if module is None or not inside(name):
                continue
            for key, value in list(vars(module).items()):
                defined = getattr(value, "__module__", None)
                # its own definitions, and the functions it re-exports from the package's other
                # modules (``minishare.data.grammar_corpus``): each name a submission can call
                if callable(value) and (defined == name or (isinstance(value, types.FunctionType)
                                                            and isinstance(defined, str) and inside(defined))):
                    _tripwire(f"{name}.{key}", tasks, tripwire)
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
                _tripwire(f"{dotted}.{key}", tasks, tripwire, home)
        return
    raw = vars(home or owner).get(attribute, target) if isinstance(owner, type) else target
    function = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
    if not callable(function):
        return
    guarded = tripwire(dotted, tasks, function)
    setattr(owner, attribute, type(raw)(guarded) if isinstance(raw, (staticmethod, classmethod)) else guarded)


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


def _roots(spec):
    """Where the submission may read, write and run code from: tuples of real paths."""
    real = os.path.realpath
    paths = sysconfig.get_paths()
    write = (real(spec["scratch"]),)
    code = (real(spec["submission"]), real(spec["library"])) + \
        tuple(real(p) for p in sys.path if _is_interpreter_path(p))
    return {"submission": real(spec["submission"]) + os.sep,
            "helpers": os.path.join(real(spec["library"]), "minishare", "grader", "cases.py"),
            "stdlib": tuple(real(paths[k]) for k in ("stdlib", "platstdlib")),
            "site": tuple(real(paths[k]) for k in ("purelib", "platlib")),   # NumPy's own code is not stdlib
            "write": write, "code": code,
            "read": write + code + (real(os.path.dirname(spec["cases"])),) +
            tuple(real(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)) + ("/dev/null",),
            "deny": tuple(real(p) for p in spec["deny"])}


def _guards(roots, forbidden, send, current):
    """(audit hook, tripwire factory, frame_of, seal): closures over what they decide with,
    captured now. Nothing they use is looked up later in a module a submission could change."""
    getframe, get_ident, fspath, path_like = sys._getframe, _thread.get_ident, posix.fspath, os.PathLike
    encoding = sys.getfilesystemencoding()
    any, isinstance, str, bytes, getattr, open = (builtins.any, builtins.isinstance, builtins.str, builtins.bytes,
                                                  builtins.getattr, builtins.open)
    PermissionError, ImportError, Forbidden = builtins.PermissionError, builtins.ImportError, ForbiddenUse
    spawn, refused, introspection, frame_attributes = SPAWN, REFUSED_PREFIXES, INTROSPECTION, FRAME_ATTRIBUTES
    file_writes, file_reads = WRITES, READS
    submission, deny, write_roots = roots["submission"], roots["deny"], roots["write"]
    read_roots, code_roots = roots["read"], roots["code"]
    # frames that only pass a call on: the interpreter's, NumPy's, and the case helpers (``raises``)
    passing = tuple(r + "/" for r in roots["stdlib"] + roots["site"]) + (roots["helpers"],)
    site = tuple(r + "/" for r in roots["site"])      # (inside the standard library's folder)
    stdlib = tuple(r + "/" for r in roots["stdlib"])
    forbidden = tuple(forbidden)
    writes = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
    busy = set()                                      # threads inside the hook (its own events pass)
    wrapper = functools.lru_cache(maxsize=0)          # a C callable: no closure, no code to read
    send_breach = _breach_sender(send)
    real = _resolver()
    loaded = set()                                    # the files of the modules loaded before the submission

    def fsdecode(path):
        path = fspath(path)
        return path.decode(encoding, "surrogateescape") if isinstance(path, bytes) else path

    def under(path, places):
        return any(path == r or path.startswith(r.rstrip("/") + "/") for r in places)

    def frame_of(depth, skip=passing):
        """The first frame above ``depth`` outside ``skip`` (the standard library, site-packages)
        and frozen or generated code: who is really asking."""
        frame = getframe(depth + 1)
        while frame is not None and (frame.f_code.co_filename.startswith("<") or (
                frame.f_code.co_filename.startswith(skip)
                and (skip is passing or not frame.f_code.co_filename.startswith(site)))):
            frame = frame.f_back
        return frame

    def submission_file(depth):
        """The submission's file asking, or None when the asker is not the submission."""
        frame = frame_of(depth + 1)
        name = frame.f_code.co_filename if frame is not None else ""
        return name[len(submission):] if name.startswith(submission) else None

    def by_submission(depth):
        return submission_file(depth + 1) is not None

    def submission_on_stack(depth):
        """The first file of the submission anywhere on the stack above ``depth``, or None: a
        library function that calls what it is handed (``Module.__call__`` calls ``forward``)
        is still the submission's call."""
        frame = getframe(depth + 1)
        while frame is not None and not frame.f_code.co_filename.startswith(submission):
            frame = frame.f_back
        return frame.f_code.co_filename[len(submission):] if frame is not None else None

    def forbidden_caller(names):
        """The submission's file making this forbidden call, or None. The first frame outside
        the interpreter and NumPy decides: the submission's own; or a library frame on behalf of
        the submission when its code does not name the function (so it was handed it), unless it
        is an operator the syntax calls (``__init__``, ``__add__``)."""
        frame = frame_of(2)
        name = frame.f_code.co_filename if frame is not None else ""
        if name.startswith(submission):
            return name[len(submission):]
        if frame is None or names[0].startswith("__") or any(n in frame.f_code.co_names for n in names):
            return None
        return submission_on_stack(2)

    def refuse(what, error=PermissionError, message=None):
        send_breach(f"{what} refused")
        raise error(message or f"the grader does not let a submission use {what}")

    def check(path, allowed, verb):
        """A refused file costs nothing by itself (the import system tries to write .pyc files):
        the submission just cannot have it."""
        path = real(path)
        if path is None or under(path, deny) or not under(path, allowed):
            raise PermissionError(f"the grader does not let a submission {verb} {path}")

    def check_code(filename, source=None):
        """Code may come from the files of the submission, the library and the interpreter only;
        compiled source must be that file's content (not a string read from elsewhere)."""
        if isinstance(filename, str) and filename.startswith("<frozen ") and source is None:
            return
        path = real(filename) if isinstance(filename, str) else None
        if path is None or not under(path, code_roots) or under(path, deny) or path in loaded:
            raise PermissionError(f"the grader does not let a submission compile or run code from {filename!r}"
                                  + (" again (a fresh copy of a module has no tripwires)" if path in loaded else ""))
        if source is not None:
            with open(path, "rb") as f:
                content = f.read()
            if (source.encode("utf-8") if isinstance(source, str) else source) != content:
                raise PermissionError(f"the grader does not let a submission compile a string as {filename!r}")

    def decide(event, args):
        if event in spawn or event.startswith(refused):
            refuse(event)
        if event.startswith("marshal.load") and not getframe(2).f_code.co_filename.startswith("<frozen importlib"):
            refuse(event)                             # (the import system reads .pyc files with it)
        if event in introspection or (event == "object.__getattr__" and args[1] in frame_attributes):
            what = args[1] if event == "object.__getattr__" else event.rsplit(".", 1)[-1]
            asking = getframe(2).f_code               # the code that made the call
            if asking in own_code:
                return
            # code that names what it calls asks for itself (``namedtuple`` reads its caller's
            # module name), so the first frame outside the interpreter and NumPy decides; code
            # that was handed it (``Module.__call__`` calling a ``forward`` set to it) asks for
            # whoever handed it, the submission if it is on the stack at all
            named = what in asking.co_names
            if (by_submission(2) if named else submission_on_stack(2) is not None):
                refuse(event if event != "object.__getattr__" else f"the attribute {what}")
        elif event == "open":
            path, mode, flags = args[0], args[1] or "r", args[2] or 0
            if isinstance(path, int):
                return
            path = fsdecode(path)
            if any(c in str(mode) for c in "wax+") or flags & writes:
                check(path, write_roots, "write")
            else:
                check(path, read_roots, "read")
        elif event in file_writes:
            for path in args:
                if isinstance(path, (str, bytes, path_like)):
                    check(fsdecode(path), write_roots, "write")
        elif event in file_reads and args and isinstance(args[0], (str, bytes, path_like)):
            check(fsdecode(args[0]), read_roots, "read")
        elif event in ("compile", "exec") and compiled_for_submission():
            if event == "compile":
                check_code(args[1], args[0] if isinstance(args[0], (str, bytes)) else b"<not source>")
            else:
                check_code(getattr(args[0], "co_filename", None))
        elif event == "import":
            name = args[0]
            if any(name == m or name.startswith(m + ".") for m in forbidden) and imported_by_submission():
                refuse(f"import of {name}", ImportError, f"{name} may not be imported in this exercise")

    def compiled_for_submission():
        """Whether the submission compiles or runs code, itself or through ``timeit`` and the
        like; not NumPy (``np.load`` parses a header) nor the library (``dataclasses`` compiles
        the methods of its configs)."""
        frame = frame_of(3, stdlib)
        return frame is None or frame.f_code.co_filename.startswith(submission)

    def imported_by_submission():
        """Whether the import under way is written in a file of the submission (the library may
        import what the submission may not)."""
        frame = getframe(3)
        while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
            frame = frame.f_back
        return frame is not None and frame.f_code.co_filename.startswith(submission)

    def audit(event, args):
        me = get_ident()
        if me in busy:
            return
        busy.add(me)
        try:
            decide(event, args)
        finally:
            busy.discard(me)

    def tripwire(dotted, tasks, function):
        names = (dotted.rsplit(".", 1)[-1], dotted.rsplit(".", 2)[-2])    # the function, its class or module

        def guarded(*args, **kwargs):
            caller = forbidden_caller(names) if not tasks or current[0] in tasks else None
            if caller is not None:
                send_breach(f"{dotted} called ({caller})")
                raise Forbidden(f"{dotted} may not be used in this exercise")
            return function(*args, **kwargs)
        opaque = wrapper(guarded)
        del opaque.__wrapped__
        opaque.__name__, opaque.__qualname__ = function.__name__, getattr(function, "__qualname__", function.__name__)
        opaque.__doc__, opaque.__module__ = function.__doc__, function.__module__
        return opaque

    own_code = (frame_of.__code__, submission_on_stack.__code__)   # the guards' own looks at the stack

    def seal():
        """From now on no file loaded so far may be compiled again at the submission's asking."""
        loaded.update(real(m.__file__) for m in list(sys.modules.values())
                      if isinstance(getattr(m, "__file__", None), str))
    return audit, tripwire, frame_of, seal


def _breach_sender(send):
    """``send_breach(text)``: the grader hears of a refusal through a line written here, by hand,
    so that no change to the ``json`` module can drop or alter it."""
    def send_breach(text):
        quoted = "".join(c if " " <= c < "\x7f" and c not in '"\\' else f"\\u{ord(c):04x}" for c in text[:300])
        send(None, raw='{"breach": "' + quoted + '"}')
    return send_breach


def _resolver():
    """``real(path)``: the path the kernel opens for ``path`` (symbolic links followed), read back
    from /proc/self/fd with the interpreter's own ``posix`` functions, which no module
    attribute a submission rebinds can change; None when it cannot be told. A file yet to be
    created is its folder's path and its name."""
    import posix
    open_path, read_link, close = posix.open, posix.readlink, posix.close
    flags = posix.O_PATH | posix.O_CLOEXEC

    def real(path):
        try:
            fd = open_path(path, flags)
        except OSError:
            head, _, name = path.rpartition("/")
            if name in ("", ".", "..") or "\0" in path:
                return None
            folder = real(head or ("/" if path.startswith("/") else "."))
            return None if folder is None else folder.rstrip("/") + "/" + name
        try:
            return read_link(f"/proc/self/fd/{fd}")
        except OSError:
            return None
        finally:
            close(fd)
    return real


def _lock_signal_handlers(frame_of, submission, send):
    """A signal handler is called with the frame that was running: a submission may not set one
    (its way to this process's state). ``signal.signal`` and ``_signal.signal`` refuse a call
    from the submission."""
    send_breach = _breach_sender(send)

    def locked(install):
        def guarded(signum, handler):
            frame = frame_of(1)
            if frame is not None and frame.f_code.co_filename.startswith(submission):
                send_breach("signal.signal refused")
                raise PermissionError("the grader does not let a submission set a signal handler")
            return install(signum, handler)
        opaque = functools.lru_cache(maxsize=0)(guarded)
        del opaque.__wrapped__
        return opaque
    for module in (signal, sys.modules["_signal"]):
        module.signal = locked(module.signal)


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
