"""Every code listing a chapter includes fits on one screen, so that it can carry one idea, and is
a function or class that the chapter's prose names, so that the reader knows what it is.

The chapters include the library by ``literalinclude`` (MyST fences). This reads each directive,
selects the lines the way Sphinx does (``:pyobject:``, then ``:start-after:``/``:start-at:``, then
``:end-before:``/``:end-at:``, then ``:lines:``) and counts them; Sphinx is not needed.
"""
import ast
import re
import textwrap
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[1] / "book"
CHAPTERS = sorted((BOOK / "chapters").glob("*.md"))
SCREEN = 40   # lines of code one listing may show
FENCE = re.compile(r"^(`{3,}|~{3,})\{literalinclude\}\s+(\S+)\n(.*?)^\1\s*$", re.M | re.S)
ANY_FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1\s*$", re.M | re.S)


def directives(chapter):
    """(path, options) of each literalinclude in ``chapter``."""
    for match in FENCE.finditer(chapter.read_text()):
        options = dict(re.findall(r"^:([\w-]+):[ \t]*(.*)$", match.group(3), re.M))
        yield (chapter.parent / match.group(2)).resolve(), options


def pyobject(lines, name):
    """Lines of ``Class``, ``function`` or ``Class.method``, decorators included."""
    scope = ast.parse("".join(lines))
    for part in name.split("."):
        node = next((n for n in ast.iter_child_nodes(scope)
                     if isinstance(n, (ast.ClassDef, ast.FunctionDef)) and n.name == part), None)
        if node is None:
            raise LookupError(f"no {name}")
        scope = node
    start = min([scope.lineno] + [d.lineno for d in scope.decorator_list])
    return lines[start - 1:scope.end_lineno]


def line_numbers(spec, n):
    """Sphinx's ``:lines:`` syntax, 1-based: ``3-7,9,12-``."""
    picked = []
    for part in spec.split(","):
        first, dash, last = part.strip().partition("-")
        start = int(first) if first else 1
        end = (int(last) if last else n) if dash else start
        picked += range(start, end + 1)
    return picked


def selected(path, options):
    """The lines a literalinclude with ``options`` shows of ``path``."""
    lines = path.read_text().splitlines(keepends=True)
    if "pyobject" in options:
        lines = pyobject(lines, options["pyobject"])
    for key, after in (("start-after", True), ("start-at", False)):
        if key in options:
            at = next(i for i, line in enumerate(lines) if options[key] in line)
            lines = lines[at + after:]
    for key, before in (("end-before", True), ("end-at", False)):
        if key in options:
            at = next(i for i, line in enumerate(lines) if options[key] in line)
            lines = lines[:at + (not before)]
    if "lines" in options:
        lines = [lines[i - 1] for i in line_numbers(options["lines"], len(lines))]
    return lines


def listed_names(path, options):
    """The functions and classes a listing shows: its ``:pyobject:`` (a method by its own name, a
    constructor or other special method by its class's), or each one defined at the top level of a
    range of lines."""
    if "pyobject" in options:
        *owner, name = options["pyobject"].split(".")
        return [owner[-1] if owner and name.startswith("__") else name]
    tree = ast.parse(textwrap.dedent("".join(selected(path, options))))
    return [node.name for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


def named_in_prose(text):
    """Every identifier inside an inline code span (`` `name` ``, `` `Class.method()` ``) of the
    text outside the fenced blocks (listings, includes, code cells) of a chapter."""
    spans = re.findall(r"`([^`\n]+)`", ANY_FENCE.sub("", text))
    return {name for span in spans for name in re.findall(r"[A-Za-z_]\w*", span)}


LISTINGS = [(chapter.name, options.get("pyobject") or options.get("start-after")
             or options.get("lines") or path.name, path, options)
            for chapter in CHAPTERS for path, options in directives(chapter)]


def test_the_chapters_have_listings():
    assert len(LISTINGS) > 20


@pytest.mark.parametrize("chapter, what, path, options", LISTINGS,
                         ids=[f"{c}:{w}" for c, w, _, _ in LISTINGS])
def test_a_listing_fits_on_a_screen(chapter, what, path, options):
    commented = [key for key, value in options.items() if value.startswith("#")]
    assert not commented, f"{chapter}: MyST reads the value of {commented} as a comment"
    if path.suffix != ".py":
        return   # prose (the README in the preface), not code
    n = len(selected(path, options))
    assert 0 < n <= SCREEN, f"{chapter} includes {n} lines of {path.name} ({what}); at most {SCREEN}"


@pytest.mark.parametrize("chapter, what, path, options", LISTINGS,
                         ids=[f"{c}:{w}" for c, w, _, _ in LISTINGS])
def test_a_listing_is_a_function_or_class_the_prose_names(chapter, what, path, options):
    if path.suffix != ".py":
        return
    names = listed_names(path, options)
    assert names, f"{chapter} includes lines of {path.name} ({what}) that define no function or class"
    unnamed = [name for name in names if name not in named_in_prose((BOOK / "chapters" / chapter).read_text())]
    assert not unnamed, (f"{chapter} lists {', '.join(unnamed)} of {path.name} but its prose never names "
                         f"it (as inline code: `{unnamed[0]}`)")


def test_the_name_rule_reads_listings_and_prose(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("T = {}\n\n\nclass A:\n    def __init__(self):\n        pass\n\n    def f(self):\n"
                      "        return 1\n\n\ndef g():\n    return 2\n")
    assert listed_names(source, {"pyobject": "A.f"}) == ["f"]
    assert listed_names(source, {"pyobject": "A.__init__"}) == ["A"]
    assert listed_names(source, {"start-at": "class A", "end-at": "return 2"}) == ["A", "g"]
    assert listed_names(source, {"lines": "1"}) == []                       # data alone: no name
    chapter = "The step is `A.f()`, then g.\n\n```{literalinclude} m.py\n:pyobject: g\n```\n\n```python\nh()\n```\n"
    assert named_in_prose(chapter) == {"A", "f"}                # not g (no code), nor the fences' names


def test_the_counter_selects_as_sphinx_does(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("x = 1\n# [start]\nclass A:\n    @staticmethod\n    def f():\n        return 1\n"
                      "# [end]\n")
    assert len(selected(source, {"pyobject": "A.f"})) == 3
    assert selected(source, {"start-after": "[start]", "end-before": "[end]", "lines": "1,3-"}) == [
        "class A:\n", "    def f():\n", "        return 1\n"]
