"""The file of probes a worker gets: the case file with everything its probes do not call cut out.

A case file holds probes, ``given`` functions, judges and their helpers (reference
implementations, tables of expected values). Only the probes run beside the submission, so only
they, the imports and the top-level definitions they reach (a helper that builds a tensor, a
class a probe instantiates) are written to the worker's copy; a judge, a ``given`` function and a
reference helper are never in the submission's process, where it could call or read them.
"""
import ast

CUT = ("judge", "given")          # ``@test_x.judge`` / ``@test_x.given``: the grader's side


def probe_source(text, path="<cases>"):
    """The source of ``text`` (a case file) with only its imports, its probes and the top-level
    definitions the probes reach, directly or through each other."""
    tree = ast.parse(text, filename=path)
    probes, defined, imports = [], {}, []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(node)
        elif _is_probe(node):
            probes.append(node)
        elif not _is_graders(node):
            for name in _bound(node):
                defined.setdefault(name, []).append(node)
    kept, todo = set(), [n for p in probes for n in _names(p)]
    while todo:
        name = todo.pop()
        for node in defined.get(name, ()):
            if id(node) not in kept:
                kept.add(id(node))
                todo += _names(node)
    body = imports + [n for n in tree.body if id(n) in kept or n in probes]
    body.sort(key=lambda n: n.lineno)
    header = '"""Probes only: written by the grader from the case file (judges stay with the grader)."""\n'
    return header + ast.unparse(ast.Module(body=body, type_ignores=[])) + "\n"


def _is_probe(node):
    return isinstance(node, ast.FunctionDef) and any(
        isinstance(d, ast.Call) and getattr(d.func, "id", getattr(d.func, "attr", None)) == "case"
        for d in node.decorator_list)


def _is_graders(node):
    return isinstance(node, ast.FunctionDef) and any(
        isinstance(d, ast.Attribute) and d.attr in CUT for d in node.decorator_list)


def _bound(node):
    """The top-level names a statement binds."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    targets = node.targets if isinstance(node, ast.Assign) else \
        [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def _names(node):
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]
