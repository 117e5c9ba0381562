"""An exercise's cases as the grader and the release both see them: its ``Suite`` (loaded from the
exercise's one ``test_*.py`` file), and the reference solution's data on them (``references``).
``grade`` scores a submission against these; ``release`` writes them into ``expected.json``."""
import dataclasses
import importlib.util
import json
import os

from minishare.grader import catalog, cases, regions


def is_test_file(name):
    return os.path.basename(name).startswith("test_") and name.endswith(".py")


@dataclasses.dataclass
class Suite:
    """The cases of one exercise, as the grader sees them."""
    exercise: catalog.Exercise
    path: str                     # the case file
    cases: dict                   # name -> cases.Case, in file order
    hidden: set                   # names of hidden cases

    def names(self, hidden):
        return [n for n in self.cases if (n in self.hidden) == hidden]

    def inputs(self, names, seed=None):
        """{name: given data} of the cases ``names`` that take inputs; ``seed`` (the grader's
        secret) draws the hidden cases' inputs, the visible ones keep theirs (in a release, the
        ones its ``expected.json`` records)."""
        drawn = {n: self.cases[n].inputs(seed if n in self.hidden else None) for n in names}
        return {n: g for n, g in drawn.items() if self.cases[n].given is not None or self.cases[n].wants_given}


def load_suite(root, exercise):
    """The exercise's one ``test_*.py`` file, imported here (the teacher's code)."""
    folder = os.path.join(root, exercise.folder)
    tests = sorted(f for f in os.listdir(folder) if is_test_file(f))
    if len(tests) != 1:
        raise catalog.CatalogError(f"{exercise.folder}: needs exactly one test_*.py file, has {tests}")
    path = os.path.join(folder, tests[0])
    spec = importlib.util.spec_from_file_location(f"cases_{exercise.id}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with open(path, encoding="utf-8") as f:
        hidden = regions.hidden_test_names(f.read(), path)
    return Suite(exercise, path, {c.name: c for c in cases.cases_of(module)}, hidden)


def references(root, suite, box, names=None, seed=None):
    """{case name: record} of the reference solution on the cases ``names`` (all), the hidden
    ones drawn with ``seed``: its probes' data (the teacher's tree), or the visible cases' data
    shipped in a release's ``expected.json``."""
    exercise = suite.exercise
    texts = reference_texts(root, exercise)
    if all(regions.BEGIN_SOLUTION.search(line) is None for t in texts.values() for line in t.splitlines()):
        path = os.path.join(root, exercise.folder, cases.EXPECTED)
        if not os.path.exists(path):
            return {}
        with open(path, encoding="utf-8") as f:
            return {name: {"data": data} for name, data in json.load(f)["reference"].items()}
    files = {}
    for relative in exercise.edit:
        with open(os.path.join(root, exercise.folder, relative), "rb") as f:
            files[relative] = f.read()
    names = list(suite.cases) if names is None else names
    result = box.run(files, suite.path, names, exercise.modules, {}, [],
                     {n: c.timeout for n, c in suite.cases.items()}, suite.inputs(names, seed))
    return result.records


def reference_texts(root, exercise):
    texts = {}
    for relative in exercise.edit:
        path = os.path.join(root, exercise.folder, relative)
        if relative.endswith(".py") and os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                texts[relative] = f.read()
    return texts
