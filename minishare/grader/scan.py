"""Reading a submission before it runs: what it may not use, found in its source.

An exercise declares what it forbids in ``points.json`` (``"forbid"``, for the whole exercise or
one task): dotted names of the library (``"minishare.ops"``, ``"minishare.sharing.assign"``) and
attribute names (``".softmax"``: ``anything.softmax``). Besides those, no submission may reach for
the machinery that would let it take an answer instead of computing one or talk to the grader:
``exec``/``eval``/``compile``/``__import__``, ``importlib``, ``inspect``, ``gc``, ``ctypes``,
``subprocess``, frames and function internals (``__globals__``, ``f_back``, ...), ``sys.modules``,
and ``open`` unless the exercise is about files.

Names are resolved through the module's imports (``import minishare.functional as F`` makes
``F.softmax`` mean ``minishare.functional.softmax``). The worker's tripwires catch at run time
what reading cannot see (a method reached through an object). A use inside a task's function costs
that task; a use anywhere else (an import at the top, a helper) costs every task it could serve.
"""
import ast
import dataclasses
import re

MODULES = ("importlib", "inspect", "gc", "ctypes", "subprocess", "multiprocessing", "socket",
           "marshal", "pickle", "shelve", "code", "codeop", "runpy", "pty", "signal", "builtins",
           "threading", "_thread", "concurrent", "asyncio", "mmap", "resource", "sysconfig", "site",
           "pkgutil", "zipimport", "timeit", "doctest", "pdb", "bdb", "trace", "cProfile", "profile",
           "dataclasses.make_dataclass", "types.CodeType", "types.FunctionType", "minishare.grader",
           "exercises", "__main__")
BUILTINS = ("exec", "eval", "compile", "__import__", "globals", "locals", "vars", "breakpoint",
            "__builtins__", "input")
ATTRIBUTES = ("__globals__", "__code__", "__closure__", "__builtins__", "__subclasses__", "__bases__",
              "__mro__", "__dict__", "__import__", "__loader__", "__spec__", "__file__", "__self__",
              "__func__", "__wrapped__", "__getattribute__", "__reduce__", "__reduce_ex__",
              "__setstate__", "__class__", "__defaults__", "__kwdefaults__", "f_back", "f_globals",
              "f_locals", "f_code", "f_builtins", "tb_frame", "tb_next", "gi_frame", "cr_frame",
              "ag_frame", "co_code", "co_consts", "co_filename")
DOTTED = ("sys.modules", "sys._getframe", "sys.path", "sys.meta_path", "sys.path_hooks",
          "sys.settrace", "sys.setprofile", "sys.addaudithook", "sys.audit", "sys.setrecursionlimit", "os.system", "os.popen",
          "os.fork", "os.forkpty", "os.kill", "os.killpg", "os._exit", "os.exec", "os.spawn",
          "os.posix_spawn", "os.write", "os.dup", "os.dup2", "os.setsid", "os.setpgid")
FILES = ("open", "os.open", "os.fdopen", "os.remove", "os.unlink", "os.rename", "os.replace",
         "os.rmdir", "os.removedirs", "os.chmod", "os.chown", "os.symlink", "os.link", "shutil",
         "io.open", "pathlib", "tempfile")
SOLUTION_FOLDER = re.compile(r"^ex\d\d_")


@dataclasses.dataclass(frozen=True)
class Breach:
    line: int
    use: str              # "minishare.ops.softmax", "exec", ".softmax"
    tasks: tuple          # the markers it costs


def scan(text, path, exercise_forbid, task_forbid, task_functions, files_allowed=False):
    """Breaches of ``text`` (the source of ``path``).

    ``exercise_forbid``: names forbidden in every task; ``task_forbid``: {marker: names};
    ``task_functions``: {function qualname: markers} from the reference solution's regions;
    ``files_allowed``: the exercise reads and writes files (``open``, ``os``, ``pathlib``)."""
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as err:
        return [Breach(err.lineno or 0, f"a syntax error ({err.msg})", tuple(_all(task_forbid, task_functions)))]
    everyone = tuple(sorted(_all(task_forbid, task_functions)))
    rules = [(name, everyone) for name in exercise_forbid]
    rules += [(name, (marker,)) for marker, names in task_forbid.items() for name in names]
    machinery = MODULES + DOTTED + tuple(f".{a}" for a in ATTRIBUTES) + (() if files_allowed else FILES)
    rules += [(name, everyone) for name in machinery]
    builtins = BUILTINS + (() if files_allowed else ("open",))
    rules += [(name, everyone) for name in builtins]
    found = {}
    for node, dotted, scope in _uses(tree, builtins):
        if SOLUTION_FOLDER.match(dotted):          # a namespace import of an exercise folder
            found.setdefault((node.lineno, dotted), Breach(node.lineno, dotted, everyone))
            continue
        for rule, tasks in rules:
            if _matches(dotted, rule):              # one breach per line and rule
                found.setdefault((node.lineno, rule), Breach(node.lineno, dotted, _cost(tasks, scope, task_functions)))
                break
    return sorted(found.values(), key=lambda b: (b.line, b.use))


def _all(task_forbid, task_functions):
    return {m for markers in task_functions.values() for m in markers} | set(task_forbid)


def _matches(dotted, rule):
    if rule.startswith("."):
        return dotted == rule or dotted.endswith(rule)
    return dotted == rule or dotted.startswith(rule + ".")


def _cost(tasks, scope, task_functions):
    """The tasks a use costs: those of the task function it is in (that the rule forbids), or
    every task the rule forbids when it is anywhere else."""
    mine = task_functions.get(scope)
    if mine:
        hit = tuple(sorted(set(mine) & set(tasks)))
        return hit or tuple(sorted(tasks))
    return tuple(sorted(tasks))


def _uses(tree, builtins):
    """(node, dotted name, enclosing function's qualname or None) for every import, attribute
    chain and builtin name the module uses."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    for node, scope in _walk(tree, None):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node, a.name, scope
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            for a in node.names:
                yield node, base if a.name == "*" else f"{base}.{a.name}", scope
        elif isinstance(node, ast.Attribute):
            chain = _chain(node, aliases)
            if chain:
                yield node, chain, scope
            yield node, f".{node.attr}", scope
        elif isinstance(node, ast.Name):
            if node.id in builtins and node.id not in aliases:
                yield node, node.id, scope
            elif node.id in aliases:
                yield node, aliases[node.id], scope
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("getattr", "setattr", "delattr", "hasattr") and node.args:
            target = _chain(node.args[0], aliases)
            name = node.args[1] if len(node.args) > 1 else None
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                yield node, f"{target}.{name.value}" if target else f".{name.value}", scope
            elif target:
                yield node, f"{target}.<computed>", scope
                yield node, f"{target}", scope


def _chain(node, aliases):
    """``a.b.c`` with ``a`` resolved through the imports, or None when the root is not a name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    root = aliases.get(node.id, node.id)
    return ".".join([root] + parts[::-1])


def _walk(node, scope):
    """Every node with the qualname of the function (or method) around it."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            inner = child.name if scope is None else f"{scope}.{child.name}"
            yield child, scope
            yield from _walk(child, inner)
        else:
            yield child, scope
            yield from _walk(child, scope)
