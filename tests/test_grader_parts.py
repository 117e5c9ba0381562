"""The grader's parts one at a time, on small hand-made inputs: the structure check before every
judge, the cut of a case file for the worker and for the release, the inputs drawn per seed, the
judge process's limits, and the scan's reading of a declared encoding."""
import textwrap

import numpy as np
import pytest

from minishare import backend
from minishare.grader import grade, judging, probes
from minishare.grader.cases import Case, structure

numpy_run_only = pytest.mark.skipif(backend.name != "numpy", reason="the grader's processes run on NumPy")

CASE_FILE = textwrap.dedent('''\
    """A case file."""
    import numpy as np

    from minishare.grader.cases import case, same


    def build(n):  # an input builder the probe calls
        return np.arange(n)


    def reference(x):  # a judge's reference: never beside the submission
        return x * 2


    def secret_mask(n):  # task 2's answer, used to draw task 3's inputs
        return np.tril(np.ones((n, n)))


    @case("ex01_task1")
    def test_double(toy, given):
        # the probe's own comment stays
        return toy.double(build(3) + given["shift"])


    @test_double.given
    def _(rng):
        return {"shift": int(rng.integers(10)), "mask": secret_mask(3)}


    @test_double.judge
    def _(out, ref, given):
        same(out, reference(np.arange(3) + given["shift"]))
    ''')


def test_structure_names_the_first_place_the_data_lacks_the_reference_shape():
    ref = {"a": [1.0, 2.0], "b": np.zeros((2, 3)), "c": 3.0}
    assert structure({"a": [1, 2], "b": np.ones((2, 3)), "c": 4}, ref) == ""     # values are the judge's
    assert "keys missing ['c']" in structure({"a": [1, 2], "b": np.ones((2, 3))}, ref)
    assert "keys not asked for ['d']" in structure({"a": [1, 2], "b": np.ones((2, 3)), "c": 1, "d": 0}, ref)
    assert "expected a list of 2" in structure({"a": [1], "b": np.ones((2, 3)), "c": 1}, ref)
    assert "expected an array of shape (2, 3)" in structure({"a": [1, 2], "b": np.ones((3, 2)), "c": 1}, ref)
    assert "expected a single value" in structure({"a": [1, 2], "b": np.ones((2, 3)), "c": [1]}, ref)
    assert "expected a dict" in structure([], ref)


def test_the_worker_gets_the_probes_and_what_they_call_and_nothing_of_the_judges():
    cut = probes.probe_source(CASE_FILE, "test_ex01_toy.py")
    compile(cut, "test_ex01_toy.py", "exec")
    assert "def build" in cut and "def test_double" in cut and "# the probe's own comment stays" in cut
    for gone in ("def reference", "def secret_mask", ".given", ".judge", "rng.integers"):
        assert gone not in cut, gone


def test_the_release_keeps_probes_and_judges_but_no_given_function_nor_what_only_it_calls():
    cut = probes.released_source(CASE_FILE, "test_ex01_toy.py")
    compile(cut, "test_ex01_toy.py", "exec")
    assert "def build" in cut and "def reference" in cut and "@test_double.judge" in cut
    assert "def secret_mask" not in cut and ".given" not in cut


def test_public_inputs_are_fixed_by_the_case_and_hidden_ones_by_the_graders_seed():
    graded = Case("ex01_task1", lambda toy, given: None, 1e-7, 1e-10, 20.0)
    graded.given = lambda rng: {"x": rng.standard_normal(4)}
    public = graded.inputs()
    assert np.array_equal(public["x"], graded.inputs()["x"])
    one, again, other = graded.inputs(seed=11), graded.inputs(seed=11), graded.inputs(seed=12)
    assert np.array_equal(one["x"], again["x"])
    assert not np.array_equal(one["x"], other["x"]) and not np.array_equal(one["x"], public["x"])


@numpy_run_only
def test_a_judge_that_works_without_end_costs_its_case_only(tmp_path):
    cases = tmp_path / "test_ex01_toy.py"
    cases.write_text(textwrap.dedent('''\
        from minishare.grader.cases import case

        @case("ex01_task1")
        def test_n(toy):
            return toy.n()

        @test_n.judge
        def _(out, ref):
            assert len(list(range(out))) == ref, "not the reference's length"
        '''))
    with judging.Judges() as judges:
        assert judges.verdict(str(cases), "test_n", 3, 3, None, 30) == (True, "")
        passed, output = judges.verdict(str(cases), "test_n", 4, 3, None, 30)
        assert not passed and "not the reference's length" in output
        passed, output = judges.verdict(str(cases), "test_n", 10 ** 12, 3, None, 2)   # a list too big
        assert not passed and "memory limit" in output
        passed, output = judges.verdict(str(cases), "test_n", 10 ** 8, 3, None, 0.05)  # a judge too slow
        assert not passed and "stopped judging this case after 0.05 s" in output
        assert judges.verdict(str(cases), "test_n", 3, 3, None, 30) == (True, "")  # a fresh process


def test_the_scan_reads_a_file_in_the_encoding_it_declares():
    latin = "# -*- coding: latin-1 -*-\nimport minishare.sharing  # caf\xe9\n".encode("latin-1")
    assert "import minishare.sharing" in grade.source_text(latin)
    assert grade.source_text(b"import os  # \xff\n") is None          # not UTF-8, no coding line
    assert grade.source_text(b"# coding: no-such-codec\nx = 1\n") is None
