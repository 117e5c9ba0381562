"""Attacks on the grader, each written as a cheating student would write it, against the real
exercises: the released stub with the attack added, graded by ``grade.grade`` on one exercise.
Each test asserts that the attack buys nothing: the attacked task (or case) scores zero, and its
rows say why (a refusal, an error or a wrong answer).

The attacks reach for the grader's machinery with names the static reading cannot see
(``_at(obj, "f_~back")`` is ``obj.f_back``), as a student who read ``scan.py`` would. A failing
test names what the grader let through: its message lists the attacked rows (score, output).
Grading runs as root here only with ``allow_root`` (a local test), where the grader takes it.
"""
import inspect
import json
import os
import resource
import signal
import subprocess
import sys
import time
import uuid

import pytest

from minishare import backend
from minishare.grader import catalog, grade, release

pytestmark = pytest.mark.skipif(backend.name == "strict", reason="workers run on NumPy whatever the backend; "
                                "the NumPy run of the suite covers this")

REAL = catalog.default_root()
EXERCISES = {e.id: e for e in catalog.load(REAL)}
# After the grader refuses root without a working unprivileged user, a local run as root says so.
GRADE_OPTIONS = {"allow_root": True} if "allow_root" in inspect.signature(grade.grade).parameters else {}


def folder(exercise_id):
    return EXERCISES[exercise_id].folder


@pytest.fixture(scope="module")
def handout(tmp_path_factory):
    """The release of the exercises attacked here, as a student gets it."""
    out = tmp_path_factory.mktemp("handout") / "release"
    release.release(REAL, out, only=["ex01", "ex02", "ex03", "ex05", "ex08", "ex17"])
    return out


def stub(handout, exercise_id, name):
    with open(os.path.join(handout, folder(exercise_id), name), encoding="utf-8") as f:
        return f.read()


def grade_files(tmp_path, exercise_id, files, json_path=None, **options):
    """Rows of ``exercise_id`` for a submission holding ``files`` ({file name: text or bytes}),
    laid out as the release."""
    submission = tmp_path / "submission"
    for name, content in files.items():
        path = submission / folder(exercise_id) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    rows, _, _ = grade.grade(REAL, submission, json_path, only=[exercise_id], **{**GRADE_OPTIONS, **options})
    return rows


def score(rows, task=None, names=None):
    return sum(r["score"] for r in rows if (task is None or r["task"] == task) and (names is None or r["name"] in names))


def report(rows):
    """The rows, for the message of a failing test: what the grader did."""
    return "".join(f"\n  {r['name']} ({r['task']}): {r['score']:g}/{r['max_score']:g} {r['output'][-240:]!r}"
                   for r in rows)


def assert_zero(rows, task=None, names=None):
    """The chosen rows (a task's, some cases', or all) score zero, each saying why."""
    chosen = [r for r in rows if (task is None or r["task"] == task) and (names is None or r["name"] in names)]
    assert chosen, "no such rows"
    earned = score(chosen)
    if earned:
        pytest.fail(f"the attack earned {earned:g} of {sum(r['max_score'] for r in chosen):g} points:"
                    + report(chosen), pytrace=False)
    silent = [r for r in chosen if not r["output"]]
    if silent:
        pytest.fail("rows scored zero without saying why:" + report(silent), pytrace=False)


# --------------------------------------------------------------------------- the student's tools
# The frame that starts a walk up the stack: sys._getframe (audited), a traceback's tb_frame
# (audited), the frame a signal handler is handed (no audit event at all), sys._getframe called
# by the library (Module.__call__), or the first of them that works ("any", the default).
TOOLKIT = '''

import os


def _at(obj, name):
    """getattr with a name the grader's reading cannot see: "f_~back" is f_back."""
    return getattr(obj, name.replace("~", ""))


_builtins = _at(len, "__se~lf__")
_modules = _at(os.sys, "mod~ules")


def _laundered(function, *args):
    """``function(*args)`` called by the library, not by this file: ``Module.__call__`` calls
    ``self.forward(*args)``, so the first caller outside the standard library is module.py."""
    carrier = _modules["minishare.nn"].Module()
    carrier.forward = function
    return carrier(*args)


def _frame_by(way):
    if way == "library":
        return _laundered(_at(os.sys, "_get~frame"), 0)
    if way == "traceback":
        try:
            raise KeyError(way)
        except KeyError as err:
            return _at(_at(err, "__trace~back__"), "tb_~frame")
    if way == "signal":
        signals, got = _modules["signal"], []
        before = signals.signal(signals.SIGUSR1, lambda number, frame: got.append(frame))
        signals.raise_signal(signals.SIGUSR1)
        signals.signal(signals.SIGUSR1, before)
        return got[0]
    return _at(os.sys, "_get~frame")(1)


def _start_frame():
    """A frame of this call, got the way FRAME_SOURCE says ("any": each in turn)."""
    for way in ["library", "signal", "traceback", "getframe"] if "FRAME_SOURCE" == "any" else ["FRAME_SOURCE"]:
        try:
            return _frame_by(way)
        except BaseException:
            continue
    raise LookupError("no frame")


def _collector(name, *args):
    """The garbage collector's ``get_objects``, ``get_referents``, ...: asked by the library
    (the quiet way), or directly when that fails."""
    function = getattr(_at(_builtins, "__imp~ort__")("gc"), name)
    try:
        return _laundered(function, *args)
    except BaseException:
        return function(*args)


def _frames():
    frame = _start_frame()
    while frame is not None:
        yield frame
        frame = _at(frame, "f_~back")


def _cases():
    """The worker's graded cases (objects with a probe, a judge and a marker) in any frame's locals."""
    found = {}
    for frame in _frames():
        for value in list(_at(frame, "f_~locals").values()):
            for item in (list(value.values()) if isinstance(value, dict) else []):
                if all(hasattr(item, a) for a in ("probe", "judge", "marker")):
                    found[id(item)] = item
    return list(found.values())
'''


def tools(frame_source="any"):
    return TOOLKIT.replace("FRAME_SOURCE", frame_source)


def attack(text, *parts):
    return text.rstrip("\n") + "\n" + "\n".join(parts) + "\n"


# --------------------------------------------------------------------------- 1. judge as an oracle
ORACLE = '''

class _Hole(dict):
    """Stands for the submission's data while a judge runs: remembers where the judge looked."""

    def __init__(self, path=()):
        super().__init__()
        self.path = path

    def __missing__(self, key):
        return _Hole(self.path + (key,))


def _assemble(got):
    if () in got:
        return got[()]
    keys = sorted({path[0] for path in got}, key=repr)
    parts = {k: _assemble({p[1:]: v for p, v in got.items() if p[0] == k}) for k in keys}
    return [parts[k] for k in sorted(keys)] if all(isinstance(k, int) for k in keys) else parts


def _expected(case):
    """What the case's judge expects, read off the calls it makes to ``same``."""
    judge = case.judge
    space = _at(judge, "__glo~bals__")
    had, original = "same" in space, space.get("same")
    for out in [_Hole()] + [[_Hole((i,)) for i in range(n)] for n in range(1, 7)]:
        for extra in ((None,), (None, None)):
            got = {}

            def record(actual, expected, *args, **kwargs):
                if isinstance(actual, _Hole):
                    got[actual.path] = expected

            space["same"] = record
            try:
                judge(out, *extra)
            except Exception:
                pass
            finally:
                if had:
                    space["same"] = original
                else:
                    space.pop("same", None)
            if got:
                return _assemble(got)
    raise LookupError(case.name)


def _answer(value):
    return lambda *args, **kwargs: value


try:
    for _case in _cases():
        try:
            _case.probe = _answer(_expected(_case))
        except Exception:
            pass
except Exception:
    pass
'''


@pytest.mark.parametrize("frame_source", ["getframe", "traceback", "signal", "library"])
def test_judge_as_an_oracle(tmp_path, handout, frame_source):
    """At import, walk the stack to the worker's cases and swap each probe for one that returns
    what the case's judge expects, read off the judge's calls to a recording ``same``. The frame
    comes from sys._getframe, from a traceback, from a signal handler, or from sys._getframe
    called by the library's Module.__call__ (the last three are my own variants)."""
    rows = grade_files(tmp_path, "ex01", {"norms.py": attack(stub(handout, "ex01", "norms.py"),
                                                              tools(frame_source), ORACLE)})
    assert_zero(rows)


@pytest.fixture(scope="module")
def full_handout(tmp_path_factory):
    out = tmp_path_factory.mktemp("full") / "release"
    release.release(REAL, out)
    return out


def test_judge_as_an_oracle_on_every_exercise(tmp_path, full_handout):
    """The same oracle appended to all 19 stubs, graded together."""
    submission = tmp_path / "submission"
    for exercise in EXERCISES.values():
        for name in exercise.edit:
            if name.endswith(".py"):
                path = submission / exercise.folder / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(attack((full_handout / exercise.folder / name).read_text(encoding="utf-8"),
                                       tools(), ORACLE), encoding="utf-8")
    rows, table, _ = grade.grade(REAL, submission, **GRADE_OPTIONS)
    assert len({r["exercise"] for r in rows}) == len(EXERCISES)
    if score(rows):
        pytest.fail(table + report([r for r in rows if r["score"]]), pytrace=False)


# --------------------------------------------------------------------------- 2. reference helpers
HELPERS = '''
import numpy as np

import minishare
from minishare.tensor import Function


def _helper(name):
    """A function of the case file: in a caller's globals, a loaded module, or anywhere."""
    for frame in _frames():
        space = _at(frame, "f_glo~bals")
        if name in space:
            return space[name]
    for module in list(_modules.values()):
        space = _at(module, "__di~ct__") if module is not None else {}
        if callable(space.get(name)):
            return space[name]
    for obj in _collector("get_objects"):
        if callable(obj) and getattr(obj, "__name__", None) == name:
            return obj
    raise LookupError(name)


class _Numeric(Function):
    """forward: ``fn`` of the arrays; backward: central differences of the sum of grad * fn."""

    def forward(self, *arrays, fn=None):
        self.arrays, self.fn = [np.array(a, dtype=np.float64) for a in arrays], fn
        return np.asarray(fn(*self.arrays), dtype=np.float64)

    def backward(self, grad):
        grads = []
        for n, a in enumerate(self.arrays):
            g = np.zeros_like(a)
            for i in np.ndindex(*a.shape):
                moved = []
                for step in (1e-6, -1e-6):
                    args = [b.copy() for b in self.arrays]
                    args[n][i] += step
                    moved.append(float((grad * self.fn(*args)).sum()))
                g[i] = (moved[0] - moved[1]) / (2 * 1e-6)
            grads.append(g)
        return tuple(grads)


def scaled_dot_product_attention(q, k, v, mask=None):
    reference = _helper("reference_attention")
    keep = None if mask is None else np.asarray(mask)
    out = _Numeric.apply(q, k, v, fn=lambda a, b, c: reference(a, b, c, keep))
    Tk = k.shape[-2]
    eye = np.broadcast_to(np.eye(Tk), tuple(k.shape[:-2]) + (Tk, Tk))
    return out, minishare.tensor(reference(q.numpy(), k.numpy(), eye, keep))


def causal_and_padding_mask(attention_mask):
    return _helper("decoder_mask")(np.asarray(attention_mask))


class GroupedQueryAttention(GroupedQueryAttention):
    def forward(self, x, mask=None, context=None):
        reference = _helper("reference_gqa")
        w = {f"{name}.{part}": getattr(getattr(self, name), part).numpy()
             for name in ("query", "key", "value", "dense") for part in ("weight", "bias")}
        keep, h, g = None if mask is None else np.asarray(mask), self.num_heads, self.num_kv_heads
        if context is None:
            return _Numeric.apply(x, fn=lambda a: reference(w, a, a, keep, h, g))
        return _Numeric.apply(x, context, fn=lambda a, c: reference(w, a, c, keep, h, g))
'''


def test_the_case_files_reference_helpers(tmp_path, handout):
    """Call the case file's own ``reference_attention``, ``reference_gqa`` and ``decoder_mask``
    (found in the calling probe's globals, a loaded module or the garbage collector's objects),
    with a backward by central differences of the same helpers."""
    rows = grade_files(tmp_path, "ex03", {"attention.py": attack(stub(handout, "ex03", "attention.py"),
                                                                  tools(), HELPERS)})
    assert_zero(rows)


# --------------------------------------------------------------------------- 3. empty hidden judges
WORKED_ONLY = '''

WORKED = {("sequence", 6, 3): [0, 0, 1, 1, 2, 2], ("sequence", 7, 3): [0, 0, 0, 1, 1, 2, 2],
          ("sequence", 5, 2): [0, 0, 0, 1, 1], ("cycle", 6, 3): [0, 1, 2, 0, 1, 2],
          ("cycle", 7, 3): [0, 1, 2, 0, 1, 2, 0], ("paper", 6, 3): [0, 1, 2, 2, 1, 0],
          ("code", 6, 3): [0, 1, 2, 2, 1, 0], ("paper", 7, 3): [0, 1, 2, 0, 1, 2, 2],
          ("code", 7, 3): [0, 1, 2, 0, 2, 1, 0], ("code", 4, 3): [0, 2, 1, 0]}


def sequence(N, M):
    return list(WORKED["sequence", N, M])


def cycle(N, M):
    return list(WORKED["cycle", N, M])


def cycle_rev(N, M, rule="paper"):
    return list(WORKED[rule, N, M])


def _nothing(fn, **options):
    return {}


try:
    for _case in _cases():
        _at(_case.probe, "__glo~bals__")["every_m_of_n"] = _nothing
except Exception:
    pass
'''
PROPERTIES = {"test_sequence_properties_for_every_m_of_n", "test_cycle_for_every_m_of_n",
              "test_cycle_rev_properties_for_every_m_of_n"}


def test_empty_hidden_judges(tmp_path, handout):
    """Answers hard-coded for the visible worked examples, and the case module's helper
    ``every_m_of_n`` rebound to return {}: a judge that loops over the items finds none to fail."""
    rows = grade_files(tmp_path, "ex05", {"assign.py": attack(stub(handout, "ex05", "assign.py"),
                                                               tools(), WORKED_ONLY)})
    assert PROPERTIES <= {r["name"] for r in rows}
    assert_zero(rows, names=PROPERTIES)


# --------------------------------------------------------------------------- 4. guards as state
DISARM = '''

def _try(step):
    try:
        step()
    except BaseException:
        pass


def _widen_roots():
    for obj in _collector("get_objects"):
        if type(obj).__name__ == "_Roots":
            for field in ("read", "write", "code"):
                getattr(obj, field).append("/")
            obj.deny.clear()


def _silence_the_hook():
    """An audit hook that lets its own events pass keeps the threads inside it in a set: put
    this thread there (the hook is found among the collector's objects, the set in its closure)."""
    me = _modules["_thread"].get_ident()
    for obj in _collector("get_objects"):
        if callable(obj) and getattr(obj, "__name__", "") == "audit":
            for cell in getattr(obj, "__clos" + "ure__", None) or ():
                if isinstance(cell.cell_contents, set):
                    cell.cell_contents.add(me)


def _disarm():
    """The worker's guards are globals of its __main__ module and attributes of objects: rebind
    each one that can be (a step the grader refuses is skipped, the next one tried)."""
    worker = _modules["__main__"]
    for name, value in (("SPAWN", ()), ("REFUSED_PREFIXES", ()), ("WRITES", set()), ("READS", set()),
                        ("INTROSPECTION", ()), ("FRAME_ATTRIBUTES", ()),
                        ("_in_folder", lambda filename, directory: False),
                        ("_asked_by", lambda *args: False), ("_imported_by", lambda *args: False)):
        _try(lambda: setattr(worker, name, value))
    roots = getattr(worker, "_Roots", None)
    for name in ("check_read", "check_write", "check_code"):
        _try(lambda: setattr(roots, name, lambda *args, **kwargs: None))
    _try(_widen_roots)
    _try(_silence_the_hook)
'''


def test_guards_as_state_then_a_shell_copies_the_solution(tmp_path, handout):
    """Rebind the worker's guards (SPAWN, REFUSED_PREFIXES, _Roots.check_*, _in_folder, the roots
    found by gc; mine: the audit hook's set of threads it lets pass), then ``os.system("cat
    <the teacher's solution> > a file")`` and run that file."""
    stolen = tmp_path / "stolen_loop.py"
    steal = f'''
_disarm()
_try(lambda: _at(os, "sys~tem")("cat {os.path.join(REAL, folder("ex17"), "loop.py")} > {stolen}"))
try:
    _solution = {{}}
    _at(_builtins, "ex~ec")(_at(_builtins, "op~en")("{stolen}").read(), _solution)
    looped_schedule, LoopedBlock = _solution["looped_schedule"], _solution["LoopedBlock"]
except BaseException:
    pass
'''
    rows = grade_files(tmp_path, "ex17", {"loop.py": attack(stub(handout, "ex17", "loop.py"), tools(), DISARM, steal)})
    copied = stolen.read_text() if stolen.exists() else ""
    assert "BEGIN SOLUTION" not in copied, "the shell command ran: the teacher's solution was copied" + report(rows)
    assert_zero(rows)


def test_guards_as_state_then_a_refused_call_goes_unrefused(tmp_path, handout):
    """(Mine.) After the rebinding above, task 1 written honestly but with one call the grader
    refuses (``sys._getframe``, which costs the task): if a guard was silenced, nothing is
    refused and the task scores."""
    honest = '''
_disarm()


def looped_schedule(n_prelude, n_recurrent, n_coda, iterations):
    _at(os.sys, "_get~frame")(0)
    if n_recurrent < 1 or iterations < 1 or n_prelude < 0 or n_coda < 0:
        raise ValueError("not a looped stack")
    P, R = n_prelude, n_recurrent
    return list(range(P)) + list(range(P, P + R)) * iterations + list(range(P + R, P + R + n_coda))
'''
    rows = grade_files(tmp_path, "ex17", {"loop.py": attack(stub(handout, "ex17", "loop.py"), tools(), DISARM, honest)})
    assert_zero(rows, task="ex17_task1")


LIBRARY_SCHEDULE = '''
import minishare


def _looped():
    return _at(_at(minishare, "shar~ing"), "loo~ped")


def looped_schedule(n_prelude, n_recurrent, n_coda, iterations):
    return list(CALL(n_prelude, n_recurrent, n_coda, iterations))
'''


def forbidden_call(handout, call, *before):
    return {"loop.py": attack(stub(handout, "ex17", "loop.py"), tools(), *before,
                              LIBRARY_SCHEDULE.replace("CALL", call))}


def test_guards_as_state_then_the_forbidden_function(tmp_path, handout):
    """Rebind the worker's guards, then call task 1's forbidden library function
    (``minishare.sharing.looped``, the schedule itself)."""
    rows = grade_files(tmp_path, "ex17", forbidden_call(handout, "_looped()", DISARM, "\n_disarm()\n"))
    assert_zero(rows, task="ex17_task1")


def test_tripwire_dodged_through_wrapped(tmp_path, handout):
    """The tripwire is a functools.wraps wrapper: its ``__wrapped__`` is the library's function."""
    rows = grade_files(tmp_path, "ex17", forbidden_call(handout, '_at(_looped(), "__wrap~ped__")'))
    assert_zero(rows, task="ex17_task1")


def test_tripwire_dodged_through_singledispatch(tmp_path, handout):
    """The tripwire looks at the frame right above it: through functools.singledispatch, that
    frame is functools.py's, not the submission's."""
    rows = grade_files(tmp_path, "ex17", forbidden_call(handout, "_functools.singledispatch(_looped())",
                                                        "\nimport functools as _functools\n"))
    assert_zero(rows, task="ex17_task1")


def test_tripwire_dodged_through_its_closure(tmp_path, handout):
    """(Mine.) The wrapper's ``__closure__`` holds the library's function; where the wrapper is an
    opaque C object, the Python function inside it is among its referents (gc.get_referents,
    asked directly or by the library), and that function's closure holds the library's."""
    unwrap = '''
def _unwrapped():
    wrapper = _looped()
    inside = [wrapper]
    try:
        inside += list(_collector("get_referents", wrapper))
    except BaseException:
        pass
    for candidate in inside:
        for cell in getattr(candidate, "__clos" + "ure__", None) or ():
            value = cell.cell_contents
            if callable(value) and value is not wrapper and getattr(value, "__name__", "") == "looped":
                return value
    raise LookupError("looped")
'''
    rows = grade_files(tmp_path, "ex17", forbidden_call(handout, "_unwrapped()", unwrap))
    assert_zero(rows, task="ex17_task1")


def test_tripwire_dodged_through_a_library_call(tmp_path, handout):
    """(Mine.) The tripwire asks who is the first caller outside the standard library: hand the
    wrapped function to the library and let the library call it. ``Module.__call__`` calls
    ``self.forward(*args)``, so a Module whose ``forward`` is the forbidden function runs it
    from minishare/nn/module.py."""
    carrier = '''
from minishare.nn import Module as _Module


def _through_the_library():
    carrier = _Module()
    carrier.forward = _looped()
    return carrier
'''
    rows = grade_files(tmp_path, "ex17", forbidden_call(handout, "_through_the_library()", carrier))
    assert_zero(rows, task="ex17_task1")


FRESH = {"spec_from_file_location": '''
def _fresh():
    util = _modules["importlib.util"]
    spec = util.spec_from_file_location("fresh_sharing", _at(_at(minishare, "shar~ing"), "__fi~le__"))
    module = util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.looped
''', "reimport": '''
def _fresh():
    _modules.pop("minishare.sharing", None)
    return _at(_builtins, "__imp~ort__")("minishare.sharing", fromlist=["looped"]).looped
'''}


@pytest.mark.parametrize("how", sorted(FRESH))
def test_a_fresh_copy_of_a_library_module_from_its_file(tmp_path, handout, how):
    """(Mine.) Execute the library's sharing.py afresh: its ``looped`` has no tripwire, and the
    code compiled is the library's own file. Either importlib.util (already loaded by the
    worker) under another name, or ``sys.modules`` emptied of minishare.sharing and imported
    again (only minishare.sharing.looped and its like are forbidden imports in ex17)."""
    rows = grade_files(tmp_path, "ex17", forbidden_call(handout, "_fresh()", FRESH[how]))
    assert_zero(rows, task="ex17_task1")


SPAWN = '''
import _posixsubprocess


def _spawn(argv, new_session=False):
    """A process, by the call under subprocess.Popen, which raises no audit event."""
    r, w = os.pipe()
    pid = _posixsubprocess.fork_exec([os.fsencode(a) for a in argv], [os.fsencode(argv[0])], True, (w,), None,
                                     None, -1, -1, -1, -1, -1, -1, r, w, True, new_session, -1, None, None, None,
                                     -1, None, False)
    os.close(w)
    os.read(r, 1000)
    os.close(r)
    return pid
'''


def test_a_process_the_audit_hook_never_hears_of_copies_the_solution(tmp_path, handout):
    """(Mine.) ``_posixsubprocess.fork_exec`` starts ``cp <the teacher's loop.py> <the submission's
    folder>/teacher_loop.py`` (no audit event), then the submission imports it: its own file."""
    copy = f'''
try:
    _here = os.path.dirname(__file__)
    os.waitpid(_spawn(["/bin/cp", "{os.path.join(REAL, folder("ex17"), "loop.py")}",
                       os.path.join(_here, "teacher_loop.py")]), 0)
    _modules["importlib"].invalidate_caches()
    from teacher_loop import looped_schedule, LoopedBlock
except BaseException:
    pass
'''
    rows = grade_files(tmp_path, "ex17", {"loop.py": attack(stub(handout, "ex17", "loop.py"), tools(), SPAWN, copy)})
    assert_zero(rows)


def test_a_helper_shipped_in_the_released_case_file(tmp_path, handout):
    """(Mine.) Not the grader's machinery but what the release hands out: the visible case file
    of ex03 defines ``decoder_mask`` (task 2's mask, for task 3's probes); pasted, it answers
    task 2. (cases.py: an answer a probe needs belongs in ``given``, on the grader's side.)"""
    import ast
    released = stub(handout, "ex03", "test_ex03_attention.py")
    helpers = [ast.get_source_segment(released, node) for node in ast.parse(released).body
               if isinstance(node, ast.FunctionDef) and not node.decorator_list]
    pasted = "\nimport numpy as np\n\n\n" + "\n\n\n".join(helpers) + \
        "\n\n\ndef causal_and_padding_mask(attention_mask):\n    return decoder_mask(np.asarray(attention_mask))\n"
    rows = grade_files(tmp_path, "ex03", {"attention.py": attack(stub(handout, "ex03", "attention.py"), pasted)})
    assert_zero(rows, task="ex03_task2")


# --------------------------------------------------------------------------- 5. one byte
@pytest.mark.parametrize("encoding", ["latin-1", "utf-8"])
def test_the_scan_blinded_by_one_byte(tmp_path, handout, encoding):
    """Task 1's forbidden use written plainly, in a file that declares latin-1 and holds one byte
    that is not UTF-8 (a reader that decodes UTF-8 sees nothing); the call goes through
    ``__wrapped__``, which the reading would have flagged, so the tripwire does not fire."""
    use = ("\n# caf\u00e9\nfrom minishare.sharing import looped\n\n\n"
           "def looped_schedule(n_prelude, n_recurrent, n_coda, iterations):\n"
           "    return list(looped.__wrapped__(n_prelude, n_recurrent, n_coda, iterations))\n")
    text = stub(handout, "ex17", "loop.py")
    content = (b"# -*- coding: latin-1 -*-\n" + text.encode("latin-1", errors="replace") + use.encode("latin-1")
               if encoding == "latin-1" else (text + use).encode("utf-8"))
    rows = grade_files(tmp_path, "ex17", {"loop.py": content})
    assert_zero(rows, task="ex17_task1")


# --------------------------------------------------------------------------- 6. the library's tables
@pytest.mark.parametrize("reach", ["import", "computed"])
def test_the_librarys_tables(tmp_path, handout, reach):
    """``minishare.sharing.TAKASE_KIYONO_RULES["cycle"]``: the raw rule, held by a dict the
    tripwires do not touch (or, where the table holds names, the function it names); imported
    plainly, or reached with names the reading cannot see."""
    table = ("from minishare import sharing as _sharing\n" if reach == "import" else
             'import minishare\n_sharing = _at(minishare, "shar~ing")\n')
    code = table + '''

def cycle(N, M):
    rule = _at(_sharing, "TAKASE_KIYONO_RULES")["cycle"]
    return list((rule if callable(rule) else getattr(_sharing, rule))(N, M))
'''
    rows = grade_files(tmp_path, "ex05", {"assign.py": attack(stub(handout, "ex05", "assign.py"), tools(), code)})
    assert_zero(rows, task="ex05_task2")


def test_the_librarys_answer_through_the_stack_it_builds(tmp_path, handout):
    """(Mine.) ex05 forbids minishare.sharing, not the models and stacks that ask it: a config's
    plan (``config.plan()``, called by the library) goes into an encoder Stack whose attention
    sets are swapped for recorders; running the stack, the library asks the plan which set serves
    each position, and the recorders write the Cycle schedule down."""
    code = '''
import numpy as np

import minishare
from minishare import models
from minishare.nn import Module, ModuleList, transformer


class _Seen(Module):
    def __init__(self, k, log):
        super().__init__()
        self.k, self.log = k, log

    def forward(self, x, **kwargs):
        self.log.append(self.k)
        return x


def cycle(N, M):
    config = models.TransformerConfig(vocab_size=8, embedding_size=8, hidden_size=8, num_attention_heads=1,
                                      intermediate_size=8, num_hidden_layers=N, num_unique_layers=M, sharing="cycle")
    stack, log = transformer.encoder(_at(config, "pl~an")(), 8, 1, 8), []
    stack.attention_sets = ModuleList(_Seen(k, log) for k in range(len(stack.attention_sets)))
    stack.ffn_sets = ModuleList(_Seen(k, []) for k in range(len(stack.ffn_sets)))
    stack(minishare.tensor(np.zeros((1, 1, 8))))
    return log
'''
    rows = grade_files(tmp_path, "ex05", {"assign.py": attack(stub(handout, "ex05", "assign.py"), tools(), code)})
    assert_zero(rows, task="ex05_task2")


# --------------------------------------------------------------------------- 7. unbounded judging
BOMBS = {
    # the brief's: ex05's hidden Sequence-properties judge parses N, M from each key and builds
    # set(range(M)); the probe is swapped (frames) to return the key "1 999999999999999"
    "probe_swapped": ("ex05", "assign.py", "test_sequence_properties_for_every_m_of_n", '''
try:
    for _case in _cases():
        if _case.name == "test_sequence_properties_for_every_m_of_n":
            _case.probe = lambda *args, **kwargs: {"1 " + "9" * 15: [0]}
except Exception:
    pass
'''),
    # (mine) no frames needed: ex08's spans cross as JSON text, outside the structure check, and
    # the judge lists every covered position: range(start, start + length)
    "spans_returned": ("ex08", "masking.py", "test_spans_respect_budget_and_boundaries", '''

def select_spans(maskable, rng, masked_lm_prob=0.15, max_n=3, word_start=None):
    return [(0, 10 ** 15)]
'''),
}
GRADE_CHILD = r'''
import inspect, json, resource, sys
from minishare.grader import grade
root, submission, only, out = sys.argv[1:5]
options = {"allow_root": True} if "allow_root" in inspect.signature(grade.grade).parameters else {}
rows, _, notes = grade.grade(root, submission, only=[only], **options)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024      # this process alone (kB on Linux)
with open(out, "w") as f:
    json.dump({"rows": rows, "peak": peak}, f, default=str)
'''
MEMORY_NET = 3 * 2 ** 30          # the grader's address space here, so a failing run cannot take the machine


@pytest.mark.parametrize("bomb", sorted(BOMBS))
def test_a_returned_value_that_makes_a_judge_work_without_end(tmp_path, handout, bomb):
    """Data that makes a judge build a list without end: ex05's hidden Sequence-properties case
    with its probe swapped to return ``{"1 999999999999999": [0]}``, or ex08's spans returned
    as ``[(0, 10**15)]``. Grading (in a child process, under a 3 GiB address-space net) must end
    (the run's timeout is a net, not a measure of speed) with the grader's own memory bounded and
    the case at zero."""
    exercise_id, name, case, code = BOMBS[bomb]
    submission = tmp_path / "submission" / folder(exercise_id)
    submission.mkdir(parents=True)
    (submission / name).write_text(attack(stub(handout, exercise_id, name), tools(), code))
    out = tmp_path / "rows.json"

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_NET, MEMORY_NET))

    done = subprocess.run([sys.executable, "-c", GRADE_CHILD, REAL, str(tmp_path / "submission"), exercise_id, str(out)],
                          cwd=os.path.dirname(REAL), preexec_fn=limit, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]
    result = json.loads(out.read_text())
    rows = [r for r in result["rows"] if r["name"] == case]
    assert result["peak"] < 2 ** 30, f"the grader's own process peaked at {result['peak'] / 2 ** 20:.0f} MiB" + report(rows)
    assert_zero(rows)


# --------------------------------------------------------------------------- 8. outliving the grade
def marked(marker):
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        pids.append(int(entry))
            except OSError:
                continue
    return pids


def test_a_process_that_outlives_the_grade(tmp_path, handout):
    """At import, ``fork_exec`` starts ``sh -c`` in a session of its own that waits for
    results.json and then writes a score of 1000 into it."""
    results, marker = tmp_path / "results.json", f"minishare-attack-{uuid.uuid4().hex}"
    script = (f": {marker}; for i in $(seq 1 600); do [ -f {results} ] && break; sleep 0.1; done; "
              f"sleep 1; echo '{{\"score\": 1000}}' > {results}")
    start = f'''
try:
    _spawn(["/bin/sh", "-c", {script!r}], new_session=True)
except BaseException:
    pass
'''
    try:
        rows = grade_files(tmp_path, "ex05", {"assign.py": attack(stub(handout, "ex05", "assign.py"), tools(), SPAWN,
                                                                   start)}, json_path=results)
        alive = marked(marker)
        time.sleep(2.5)
        written = json.loads(results.read_text())
        assert not alive, f"processes of the submission still run after grade() returned: {alive}"
        assert written["score"] != 1000, "results.json was rewritten after the grade"
        assert_zero(rows)
    finally:
        for pid in marked(marker):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


# --------------------------------------------------------------------------- 9. silently root
def user_runs_this_python(name):
    try:
        return subprocess.run([sys.executable, "-c", "pass"], user=name, capture_output=True, timeout=60).returncode == 0
    except (KeyError, OSError, subprocess.SubprocessError):
        return False


@pytest.mark.skipif(os.geteuid() != 0, reason="the grader refuses root only when it is root")
@pytest.mark.parametrize("user", ["minishare-no-such-user", "nobody"])
def test_silently_root(tmp_path, handout, monkeypatch, user):
    """Grading as root where the unprivileged user cannot run this Python (or does not exist):
    the grader must refuse, saying how to fix it, unless allow_root; and with allow_root, no
    note of the grader's own reaches what the student sees (results.json's "output")."""
    if user_runs_this_python(user):
        pytest.skip(f"user {user} can run this Python here")
    monkeypatch.setenv("MINISHARE_GRADER_USER", user)
    files = {"assign.py": stub(handout, "ex05", "assign.py")}
    results = tmp_path / "refused.json"
    try:
        rows = grade_files(tmp_path / "refused", "ex05", files, json_path=results,
                           **({"allow_root": False} if GRADE_OPTIONS else {}))
    except Exception as err:                      # noqa: BLE001  (a refusal, of any kind, with its message)
        said = str(err)
        assert user in said and any(hint in said for hint in ("MINISHARE_GRADER_USER", "allow_root", "allow-root")), \
            f"the refusal does not say how to fix it: {said!r}"
    else:
        raise AssertionError("graded as root, with no unprivileged user, without refusing; results.json output: "
                             f"{json.loads(results.read_text())['output']!r}" + report(rows))
    results = tmp_path / "allowed.json"
    grade_files(tmp_path / "allowed", "ex05", files, json_path=results)
    written = json.loads(results.read_text())
    assert user not in written["output"] and "root" not in written["output"] and "audit" not in written["output"], \
        f"results.json output: {written['output']!r}"
    assert not any(user in t["output"] or "audit hook" in t["output"] for t in written["tests"]), written["tests"]


# --------------------------------------------------------------------------- mine: the current task
SPOOF = '''

def _current():
    """The worker's record of the task running now: a dict {"task": ...} or a list [task]."""
    for frame in _frames():
        value = _at(frame, "f_~locals").get("current")
        if isinstance(value, dict) and "task" in value:
            return value, "task"
        if isinstance(value, list) and len(value) == 1:
            return value, 0
    raise LookupError("current")


def backward(root, grad, inputs):
    """The library's Tensor.backward, with the worker's idea of the current task set to none."""
    current, key = _current()
    task, current[key] = current[key], None
    try:
        for x in inputs:
            if x._ctx is not None or not x.requires_grad:
                raise ValueError("inputs must be leaves that require grad")
        root.backward(grad, retain_graph=True)
    finally:
        current[key] = task
'''


def test_the_current_task_spoofed(tmp_path, handout):
    """(Mine.) Task 2 of ex02 may not call Tensor.backward (tasks 1 and 3 may). The tripwire asks
    the worker's record of the current task, a dict or list in main's frame (reached by any
    frame the toolkit can get): set it to None around the call."""
    rows = grade_files(tmp_path, "ex02", {"engine.py": attack(stub(handout, "ex02", "engine.py"), tools(), SPOOF)})
    assert_zero(rows, task="ex02_task2")
