"""Cutting a case file down to what one reader may see.

A case file holds probes, ``given`` functions, judges and their helpers (reference
implementations, tables of expected values). Two readers get less than all of it:

* the worker, beside the submission, gets ``probe_source``: the imports, the probes and the
  top-level definitions they reach (a helper that builds a tensor, a class a probe
  instantiates). A judge, a ``given`` function and a reference helper are never in the
  submission's process, where it could call or read them.
* the student's copy gets ``released_source``: the visible cases' probes and judges, so that
  ``pytest`` judges them at home as the grader does, but no ``given`` function and no helper only
  a ``given`` function uses (task 3's inputs may be task 2's answer); the release records the
  inputs themselves in ``expected.json``.

Whatever is cut goes with its decorators; everything kept stays as written, comments included.
"""
import ast

GRADERS = ("judge", "given")      # ``@test_x.judge`` / ``@test_x.given``


def probe_source(text, path="<cases>"):
    """``text`` (a case file) with only its imports, probes and what the probes reach."""
    return _keep(text, path, roots=("probe",))


def released_source(text, path="<cases>"):
    """``text`` (the visible part of a case file) without its ``given`` functions and the
    definitions only they reach."""
    return _keep(text, path, roots=("probe", "judge"))


def _keep(text, path, roots):
    tree = ast.parse(text, filename=path)
    defined, kept, todo = {}, set(), []
    for node in tree.body:
        kind = _kind(node)
        if kind in roots or kind == "import":
            kept.add(id(node))
            todo += _names(node)
        elif kind == "definition":
            for name in _bound(node):
                defined.setdefault(name, []).append(node)
    while todo:
        name = todo.pop()
        for node in defined.get(name, ()):
            if id(node) not in kept:
                kept.add(id(node))
                todo += _names(node)
    lines = text.splitlines(keepends=True)
    for node in reversed(tree.body):
        if id(node) not in kept and _kind(node) != "docstring":
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
            lines[first - 1:node.end_lineno] = []
    return "".join(lines)


def _kind(node):
    """"import", "probe", "judge", "given", "docstring" or "definition" (anything else)."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return "import"
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
        return "docstring"
    for decorator in getattr(node, "decorator_list", ()):
        if isinstance(decorator, ast.Call) and getattr(decorator.func, "id", getattr(decorator.func, "attr", None)) == "case":
            return "probe"
        if isinstance(decorator, ast.Attribute) and decorator.attr in GRADERS:
            return decorator.attr
    return "definition"


def _bound(node):
    """The top-level names a statement binds."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    targets = node.targets if isinstance(node, ast.Assign) else \
        [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def _names(node):
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]
