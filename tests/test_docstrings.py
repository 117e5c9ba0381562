"""Every docstring of the library reads as reStructuredText without a docutils warning.

The book's API reference is generated from the docstrings and built with warnings as errors
(``bash book/build.sh``), so a docstring whose layout docutils misreads (an indented block after a
plain colon, a list without a blank line before it, ``|x|`` taken for a substitution) fails the
book. This checks the same thing in a second, in the test suite, so that it fails here first.
Sphinx's roles (``:func:`` ...) are accepted as they are: whether their targets exist is the book
build's check (``-n``).
"""
import importlib
import inspect
import io
import pkgutil

import pytest

import minishare

docutils_core = pytest.importorskip("docutils.core")
from docutils import nodes                       # noqa: E402  (after the skip)
from docutils.parsers.rst import roles           # noqa: E402

SPHINX_ROLES = ("func", "class", "meth", "mod", "attr", "data", "obj", "exc", "ref", "doc", "math", "py:func",
                "py:class", "py:meth")


def _literal_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    return [nodes.literal(rawtext, text)], []


for _role in SPHINX_ROLES:
    roles.register_local_role(_role, _literal_role)


def _modules():
    names = [m.name for m in pkgutil.walk_packages(minishare.__path__, "minishare.")
             if not m.name.rsplit(".", 1)[-1].startswith("_")]       # as the book's API reference
    return ["minishare"] + sorted(names)


def _docstrings(module):
    """(where, docstring) for the module and every public class, function and method defined in
    it: what the book's API reference documents (autodoc leaves out names starting with "_")."""
    yield module.__name__, inspect.getdoc(module)
    for name, obj in vars(module).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue                                     # imported: checked where it is defined
        if inspect.isfunction(obj):
            yield f"{module.__name__}.{name}", inspect.getdoc(obj)
        elif inspect.isclass(obj):
            yield f"{module.__name__}.{name}", inspect.getdoc(obj)
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                member = getattr(member, "__func__", member)            # classmethod, staticmethod
                if inspect.isfunction(member) or isinstance(member, property):
                    yield f"{module.__name__}.{name}.{attr}", inspect.getdoc(member)


def rst_problems(text):
    """docutils' warnings and errors for ``text`` (empty when it reads cleanly)."""
    stream = io.StringIO()
    docutils_core.publish_doctree(text, settings_overrides={
        "report_level": 2, "halt_level": 5, "warning_stream": stream, "file_insertion_enabled": False})
    return stream.getvalue().strip()


def test_the_check_can_fail():
    assert rst_problems("Plain text, ``code`` and :func:`minishare.tensor`.") == ""
    # an indented formula right under its sentence, the layout gradcheck's docstring had
    assert "unexpected unindent" in rst_problems("The scalar:\n    d = (f(x + e) - f(x - e)) / 2e\nand more.")
    assert "substitution" in rst_problems("the mean |value_(l+1) − value_l| over l")


@pytest.mark.parametrize("module_name", _modules())
def test_docstrings_are_clean_restructuredtext(module_name):
    module = importlib.import_module(module_name)
    bad = {where: problems for where, doc in _docstrings(module) if doc
           for problems in [rst_problems(doc)] if problems}
    assert not bad, "docstrings the book's API reference cannot build (fix the layout):\n" + "\n".join(
        f"{where}:\n  {problems}" for where, problems in bad.items())
