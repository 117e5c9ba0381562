"""The course's reference pages are complete and agree with what is in the checkout:

- ``notebooks/README.md`` has a row for every notebook, naming the graded exercises of its chapter;
- every notebook asks at least two predict-then-run questions (``course.reveal``) and has a
  section of exercises;
- ``book/start_here.md`` has a row for every chapter with the same exercises, and its routes name
  only exercises that exist;
- the glossary defines the statistics the book's sentences rest on and chapters 14-16's terms.

The exercises of a chapter are read from each exercise's README (``*Chapter N`` on its first
lines), the rule the book's chapters use, never from a list typed here.
"""
import glob
import json
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = sorted(glob.glob(os.path.join(ROOT, "notebooks", "[0-9][0-9]_*.py")))


def read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


def exercises_by_chapter():
    found = {}
    for readme in sorted(glob.glob(os.path.join(ROOT, "exercises", "ex[0-9][0-9]_*", "README.md"))):
        with open(readme, encoding="utf-8") as f:
            head = "".join(f.readline() for _ in range(4))
        chapter = re.search(r"\*Chapter (\d+)", head)
        assert chapter, f"{readme}: no '*Chapter N' on its first lines"
        found.setdefault(int(chapter.group(1)), set()).add(os.path.basename(os.path.dirname(readme))[:4])
    return found


def listed(cell):
    return set(re.findall(r"\bex\d\d\b", cell))


def test_the_notebooks_table_has_every_notebook_and_its_exercises():
    rows = {int(m.group(1)): m.group(2) for m in
            re.finditer(r"^\| (\d+) \| `\d\d_\w+` \|.*\| ([^|]*) \|$", read("notebooks", "README.md"), re.M)}
    chapters = exercises_by_chapter()
    for path in NOTEBOOKS:
        n = int(os.path.basename(path)[:2])
        assert n in rows, f"notebooks/README.md has no row for {os.path.basename(path)}"
        assert listed(rows[n]) == chapters.get(n, set()), \
            f"notebook {n}'s row lists {sorted(listed(rows[n]))}, chapter {n}'s exercises are {sorted(chapters.get(n, ()))}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[os.path.basename(p) for p in NOTEBOOKS])
def test_every_notebook_asks_two_predictions_and_has_exercises(path):
    text = read(path)
    assert text.count("course.reveal(") >= 2, f"{os.path.basename(path)}: fewer than two predict-then-run questions"
    assert re.search(r"^# ##+ [\d.]*\s*Exercises", text, re.M), f"{os.path.basename(path)}: no Exercises section"


def test_start_here_has_every_chapter_with_its_exercises_and_routes_of_real_exercises():
    text = read("book", "start_here.md")
    chapters = exercises_by_chapter()
    numbers = sorted(int(os.path.basename(p)[:2]) for p in glob.glob(os.path.join(ROOT, "book", "chapters", "[0-9][0-9]_*.md")))
    for n in numbers:
        row = re.search(r"^\| %d \{doc\}`chapters/%02d_\w+` \|.*\| ([^|]*) \|$" % (n, n), text, re.M)
        assert row, f"book/start_here.md: no row for chapter {n}"
        assert listed(row.group(1)) == chapters.get(n, set()), f"start_here, chapter {n}: {row.group(1)!r}"
    with open(os.path.join(ROOT, "exercises", "points.json"), encoding="utf-8") as f:
        known = set(json.load(f))
    assert listed(text) <= known, f"start_here names exercises that do not exist: {sorted(listed(text) - known)}"


@pytest.mark.parametrize("term", [
    "cannot tell", "paired interval", "Holm's correction", "detectable difference", "baseline, no-model baseline",
    "looped depth, looped model", "truncated backpropagation", "relaxed recursive, relaxation, rank r",
    "Basis Sharing", "MoR, Mixture-of-Recursions", "router", "capacity", "expert-choice, token-choice"])
def test_the_glossary_defines(term):
    assert re.search(r"^%s\n: " % re.escape(term), read("book", "glossary.md"), re.M), f"the glossary has no entry {term!r}"
