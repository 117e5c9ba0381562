"""Classroom assignments: one source holds the solutions and the hidden tests; a tool makes the
student copy, checks that the assignment set is sound, and grades a submission.

    python -m minishare.exercises release --out DIR     # the student copy of exercises/
    python -m minishare.exercises check                 # solutions pass; stubs fail; nothing leaks
    python -m minishare.exercises grade SUBMISSION [--json results.json]

The format follows nbgrader's solution regions and minitorch's task markers:

* In a student's module, ``### BEGIN SOLUTION task k`` ... ``### END SOLUTION`` inside a function
  body becomes ``raise NotImplementedError("exNN task k")`` in the release (``regions``).
* In a test file, ``### BEGIN HIDDEN TESTS`` ... ``### END HIDDEN TESTS`` is left out of the
  release; the grader runs those tests too.
* Every test carries one marker naming its task, ``@pytest.mark.ex03_task2``; the points of each
  task and the files a student may edit live in one table, ``exercises/points.json``
  (``catalog``), so ``pytest -m ex03_task2`` runs one task.

Only the standard library is imported here; pytest runs in subprocesses (``runner``), so
``import minishare`` still needs NumPy alone.
"""
