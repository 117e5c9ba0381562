"""Classroom assignments: one source holds the solutions, the hidden cases and the mutants; a tool
makes the student copy, checks that the assignment set is sound, and grades submissions where
their code cannot reach the score::

    python -m minishare.grader release --out DIR [--only exNN]   # the student copy
    python -m minishare.grader check                             # is the set sound?
    python -m minishare.grader grade SUBMISSION [--json results.json]
    python -m minishare.grader batch SUBMISSIONS --out DIR       # scores.csv
    python -m minishare.grader gradescope --out autograder.zip
    python -m minishare.grader {grade,batch,gradescope} --golf ...  # the class competition

The pieces, one concept each:

* ``regions``: ``### BEGIN SOLUTION task k`` ... ``### END SOLUTION`` in a student's module
  becomes ``raise NotImplementedError("exNN task k")`` in the release; hidden cases live between
  ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS`` (nbgrader's regions, minitorch's tasks).
* ``catalog``: ``exercises/points.json``, the one table of tasks, points, editable files and what
  a submission may not use.
* ``cases``: a case is a probe (runs beside the submission, returns data), its inputs (``given``,
  drawn by the grader) and a judge (runs in the grader, on that data); ``pytest`` runs the
  visible ones in a student's copy. ``probes`` cuts a case file down to what the worker, or the
  student's copy, may see.
* ``scan`` reads a submission for forbidden uses; ``worker`` is the process it runs in (Landlock
  from ``landlock``, audit hook, tripwires); ``sandbox`` starts workers as another user, with
  limits, reads their data and kills what they leave; ``judging`` runs the judges under limits.
* ``grade``, ``check``, ``release``, ``gradescope``: the commands.
* ``golf``: the class competition's grading (``--golf``): an ``entry.json`` read as data, graded in
  the grader's process, its score against the count baselines and the leaderboard; ``golf_code``
  its code track (a student's ``model.py`` in the sandbox, through the probes of ``golf_probes``).

``import minishare`` does not import this package; it needs NumPy (and pytest for ``cases``).
"""
