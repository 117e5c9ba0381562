"""Solution and hidden-test regions: finding them, and stripping them for the release.

In a student's module (nbgrader's solution regions, minitorch's task ids)::

    def softmax(x):
        ### BEGIN SOLUTION task 1
        e = np.exp(x - x.max())
        return e / e.sum()
        ### END SOLUTION

becomes, in the release, ``raise NotImplementedError("ex01 task 1")`` at the marker's indentation.
A region must lie inside one function body, so the stub still imports and every call of an
unfinished function fails with a message naming the task. In a test file, the lines from
``### BEGIN HIDDEN TESTS`` to ``### END HIDDEN TESTS`` (markers included) are left out.
"""
import ast
import re

from minishare.errors import MinishareError

BEGIN_SOLUTION = re.compile(r"^(\s*)### BEGIN SOLUTION task (\d+)\s*$")
END_SOLUTION = re.compile(r"^\s*### END SOLUTION\s*$")
BEGIN_HIDDEN = re.compile(r"^\s*### BEGIN HIDDEN TESTS\s*$")
END_HIDDEN = re.compile(r"^\s*### END HIDDEN TESTS\s*$")
ANY_MARKER = re.compile(r"### (BEGIN|END) (SOLUTION|HIDDEN TESTS)")


class RegionError(MinishareError, ValueError):
    """A malformed region; the message names the file and the line."""


def regions(text, path, kind):
    """[(first line, last line, task)] of the ``kind`` ("solution" or "hidden") regions, 0-based
    line numbers of the two marker lines; task is None for hidden regions."""
    begin, end = (BEGIN_SOLUTION, END_SOLUTION) if kind == "solution" else (BEGIN_HIDDEN, END_HIDDEN)
    other = (BEGIN_HIDDEN, END_HIDDEN) if kind == "solution" else (BEGIN_SOLUTION, END_SOLUTION)
    found, start, task = [], None, None
    for number, line in enumerate(text.splitlines()):
        where = f"{path}:{number + 1}"
        if other[0].match(line) or other[1].match(line):
            raise RegionError(f"{where}: a {'hidden-test' if kind == 'solution' else 'solution'} "
                              "marker in a file of the other kind")
        if begin.match(line):
            if start is not None:
                raise RegionError(f"{where}: BEGIN inside the region opened at line {start + 1}")
            start = number
            task = int(begin.match(line).group(2)) if kind == "solution" else None
        elif end.match(line):
            if start is None:
                raise RegionError(f"{where}: END without BEGIN")
            found.append((start, number, task))
            start = None
        elif ANY_MARKER.search(line):
            raise RegionError(f"{where}: malformed marker (write '### BEGIN SOLUTION task K', "
                              "'### END SOLUTION', '### BEGIN HIDDEN TESTS', '### END HIDDEN TESTS')")
    if start is not None:
        raise RegionError(f"{path}:{start + 1}: region never closed")
    return found


def _inside_functions(stub, lines, path):
    """Check that each raise put at the 0-based ``lines`` of ``stub`` is a statement of a function
    body (so the module imports and only calling the unfinished function fails)."""
    tree = ast.parse(stub, filename=path)
    functions = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for number in lines:
        if not any(f.lineno < number + 1 <= f.end_lineno for f in functions):
            raise RegionError(f"{path}:{number + 1}: a solution region must lie inside a function body")


def strip_solutions(text, path, exercise_id):
    """The stub of a student's module: every solution region replaced by a raise. Checks that each
    region lies inside a function body and that the stub parses."""
    lines = text.splitlines(keepends=True)
    out, cursor, raises = [], 0, []
    for first, last, task in regions(text, path, "solution"):
        out += lines[cursor:first]
        indent = BEGIN_SOLUTION.match(lines[first]).group(1)
        raises.append(len(out))
        out.append(f'{indent}raise NotImplementedError("{exercise_id} task {task}")\n')
        cursor = last + 1
    stub = "".join(out + lines[cursor:])
    _parses(stub, path)
    _inside_functions(stub, raises, path)
    return stub


def strip_hidden(text, path):
    """A test file without its hidden tests; checks that what is left parses."""
    lines = text.splitlines(keepends=True)
    out, cursor = [], 0
    for first, last, _ in regions(text, path, "hidden"):
        out += lines[cursor:first]
        cursor = last + 1
    released = "".join(out + lines[cursor:])
    _parses(released, path)
    return released


def hidden_test_names(text, path):
    """Names of the test functions defined inside hidden regions."""
    lines = text.splitlines()
    names = set()
    for first, last, _ in regions(text, path, "hidden"):
        for line in lines[first:last + 1]:
            match = re.match(r"\s*def (test\w*)\s*\(", line)
            if match:
                names.add(match.group(1))
    return names


def solution_lines(text, path):
    """The stripped lines inside solution regions (markers excluded)."""
    lines = text.splitlines()
    return [lines[i].strip() for first, last, _ in regions(text, path, "solution")
            for i in range(first + 1, last)]


def _parses(text, path):
    try:
        ast.parse(text, filename=path)
    except SyntaxError as err:
        raise RegionError(f"{path}:{err.lineno}: the released file does not parse ({err.msg})") from None
