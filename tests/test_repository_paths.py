"""Nothing in the repository points at a file that is not in it: a reader who follows a
reference finds what it names. The references read are the ones a reader follows:

- a Markdown link ``[text](target)`` whose target is not a URL (relative to its file; in the book,
  a target starting with ``/`` is relative to ``book/``, and a page may be named without ``.md``);
- the path of a MyST ``include``, ``literalinclude``, ``image`` or ``figure`` directive;
- a path that starts at a folder of the repository's top level (``minishare/nn/act.py``,
  ``book/figures/report.md``) or at the folder of notes outside it that files once cited (its name
  is in ``mention_pattern``), or a file's path that climbs out of its folder (``../README.md``; a
  folder named so, as in ``release --out ../my-exercises``, is where a command writes), in Markdown
  text and in Python comments and docstrings (a string in code is data, often a path made up for a
  test);
- a bare Markdown file name (``README.md``) mentioned in the same places, which must exist in some
  folder of the repository.

Not references: paths that the .gitignore's anchored entries make build outputs (``book/_build/``,
``runs/``: made by a command, absent from a checkout), the book's ``_generated/`` parts (written at
build time), and placeholders (a folder or file name with ``NN`` or ``NAME`` in it, as in
``exNN_topic/`` or ``exp_NAME.py``).
"""
import ast
import io
import os
import re
import subprocess
import tokenize

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def repository_files():
    """The checkout's files, committed or not, that git does not ignore."""
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the repository's files are git's list")
    return sorted(f for f in out.splitlines() if os.path.isfile(os.path.join(ROOT, f)))


FILES = None


def files():
    global FILES
    if FILES is None:
        FILES = repository_files()
    return FILES


def outputs():
    """The anchored entries of .gitignore (``/runs/``, ``/book/_build/``): folders a command makes."""
    with open(os.path.join(ROOT, ".gitignore"), encoding="utf-8") as f:
        return tuple(line.strip().strip("/") + "/" for line in f if line.startswith("/"))


def top_folders():
    return sorted({f.split("/")[0] for f in files() if "/" in f and not f.startswith(".git/")})


def mention_pattern():
    tops = "|".join(re.escape(t) for t in top_folders() + ["shared"])
    # a path from a top folder, or a file's that climbs (../, ending in .ext), made of name characters;
    # a placeholder's <, *, { or $ right after it means the path goes on in a form that is not a name
    return re.compile(r"(?<![\w/.$<>{}@:-])((?:\.\./)+[\w.-][\w./-]*\.[A-Za-z]\w*|(?:%s)/[\w./-]*)(?![\w<>*{}$/])"
                      % tops)


BARE_MD = re.compile(r"(?<![\w/.$<>{}@:-])([\w-]+\.md)\b")
LINK = re.compile(r"\]\(([^()\s]+)\)")
DIRECTIVE = re.compile(r"^\s*(?:```|:::)\{(?:include|literalinclude|image|figure)\}\s+(\S+)", re.M)


def python_prose(text):
    """The comments and docstrings of a Python file, with their line numbers."""
    found = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            found.append((token.start[0], token.string))
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                found.append((first.lineno, first.value.value))
    return found


def exists(path, folder):
    """``path`` names something in the repository, read from the root or from ``folder``."""
    inside = [os.path.normpath(os.path.join(base, path)) for base in ("", folder)]
    return any(not p.startswith("..") and os.path.exists(os.path.join(ROOT, p)) for p in inside)


def skipped(path):
    path = os.path.normpath(path)
    return ((path + "/").startswith(outputs()) or "_generated" in path.split(os.sep)
            or any("NN" in part or "NAME" in part for part in path.split(os.sep)))


def broken(name, text, prose, md_names):
    """The references of one file (``name``, relative to the root) to what is not in the repository."""
    folder = os.path.dirname(name)
    problems = []
    mention = mention_pattern()
    for first, chunk in prose:
        for m in mention.finditer(chunk):
            line = first + chunk.count("\n", 0, m.start())
            path = m.group(1).rstrip(".")
            inside = os.path.normpath(os.path.join(folder, path)) if path.startswith("../") else path
            if path.startswith("../") and inside.startswith(".."):
                problems.append(f"{name}:{line}: {path!r} leaves the repository")
            elif not skipped(inside) and not exists(path, folder):
                problems.append(f"{name}:{line}: {path!r} is not in the repository")
        for m in BARE_MD.finditer(chunk):
            line = first + chunk.count("\n", 0, m.start())
            if m.group(1) not in md_names:
                problems.append(f"{name}:{line}: {m.group(1)!r} is in no folder of the repository")
    if name.endswith(".md"):
        book_page = name.startswith("book/")
        for m in list(LINK.finditer(text)) + list(DIRECTIVE.finditer(text)):
            target = m.group(1).split("#")[0].split("<")[-1].rstrip(">")
            if not target or re.match(r"[a-z][\w+.-]*:", target):
                continue          # an anchor on the same page, or a URL
            base = "book" if target.startswith("/") and book_page else folder
            path = os.path.normpath(os.path.join(base, target.lstrip("/")))
            line = text.count("\n", 0, m.start()) + 1
            if path.startswith(".."):
                problems.append(f"{name}:{line}: {target!r} leaves the repository")
            elif not (skipped(path) or os.path.exists(os.path.join(ROOT, path))
                      or (book_page and os.path.exists(os.path.join(ROOT, path + ".md")))):
                problems.append(f"{name}:{line}: {target!r} is not in the repository")
    return problems


def test_every_reference_to_a_path_is_in_the_repository():
    md_names = {os.path.basename(f) for f in files() if f.endswith(".md")}
    problems = []
    for name in files():
        if not name.endswith((".md", ".py")):
            continue
        with open(os.path.join(ROOT, name), encoding="utf-8") as f:
            text = f.read()
        prose = python_prose(text) if name.endswith(".py") else [(1, text)]
        problems += broken(name, text, prose, md_names)
    problems = list(dict.fromkeys(problems))          # a link found as a link and as a mention, once
    assert not problems, "references to paths that are not in the repository:\n" + "\n".join(problems)

