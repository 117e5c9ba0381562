"""The table of exercises: ``exercises/points.json``, the one place that says which tasks an
exercise has, what each is worth, and which files a student may edit.

    {"ex03": {"title": "...", "edit": ["attention.py"],
              "forbid": ["minishare.nn.attention", ".scaled_dot_product_attention"],
              "tasks": {"task1": {"points": 3, "title": "...", "forbid": [...]}, ...}}, ...}

``forbid`` names what a submission may not use (``scan`` and the worker's tripwires enforce it):
dotted names of the library, or ``.name`` for an attribute of any object; on a task, only that
task's functions. ``"files": true`` lets an exercise about files use ``open``, ``os`` and friends.

An exercise lives in the folder ``exNN_topic/`` whose name starts with its id. A test of task k
carries the marker ``exNN_taskk``. Files in ``edit`` ending in ``.py`` are released as stubs;
other ``edit`` files (a measured curve, a written defence) are the student's answers: the release
leaves the teacher's out and the grader takes the student's.
"""
import dataclasses
import json
import os
import re

from minishare.errors import MinishareError

TABLE = "points.json"
MARKER = re.compile(r"^(ex\d\d)_task(\d+)$")
EXERCISE_ID = re.compile(r"^ex\d\d$")


class CatalogError(MinishareError, ValueError):
    """The table or the folders disagree; the message names the exercise and the problem."""


@dataclasses.dataclass(frozen=True)
class Task:
    marker: str          # "ex03_task2"
    points: float
    title: str
    forbid: tuple = ()   # what this task's functions may not use, beyond the exercise's


@dataclasses.dataclass(frozen=True)
class Exercise:
    id: str              # "ex03"
    folder: str          # "ex03_attention", relative to the exercises root
    title: str
    edit: tuple          # files (relative to the folder) a student may edit
    tasks: tuple         # of Task, in the table's order
    forbid: tuple = ()   # what no function of the submission may use
    files: bool = False  # the exercise is about files: open, os, shutil and pathlib are allowed

    @property
    def modules(self):
        """The student's Python modules, by name (``attention`` for ``attention.py``)."""
        return tuple(e[:-3] for e in self.edit if e.endswith(".py"))

    @property
    def points(self):
        return sum(task.points for task in self.tasks)

    def task(self, marker):
        return next(task for task in self.tasks if task.marker == marker)


def default_root():
    """``exercises/`` next to the ``minishare`` package (a source checkout)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(os.path.dirname(package), "exercises")


def load(root):
    """The exercises under ``root``, in id order. Raises CatalogError naming every problem."""
    path = os.path.join(root, TABLE)
    if not os.path.isfile(path):
        raise CatalogError(f"{path} does not exist: no exercises table")
    with open(path, encoding="utf-8") as f:
        try:
            table = json.load(f)
        except json.JSONDecodeError as err:
            raise CatalogError(f"{path}: not valid JSON ({err})") from None
    folders = {name[:4]: name for name in sorted(os.listdir(root))
               if EXERCISE_ID.match(name[:4]) and os.path.isdir(os.path.join(root, name))}
    problems, exercises = [], []
    for ex_id, entry in sorted(table.items()):
        if not EXERCISE_ID.match(ex_id):
            problems.append(f"{TABLE}: key {ex_id!r} is not an exercise id like ex03")
            continue
        if ex_id not in folders:
            problems.append(f"{ex_id}: no folder {ex_id}_<topic>/ under {root}")
            continue
        tasks = []
        for name, spec in entry.get("tasks", {}).items():
            marker = f"{ex_id}_{name}"
            if not MARKER.match(marker) or not isinstance(spec.get("points"), (int, float)) \
                    or spec["points"] <= 0:
                problems.append(f"{ex_id}: task {name!r} needs a name like task2 and points > 0")
                continue
            tasks.append(Task(marker, spec["points"], spec.get("title", name), _names(spec, marker, problems)))
        if not tasks:
            problems.append(f"{ex_id}: the table lists no tasks")
        edit = tuple(entry.get("edit", ()))
        if not edit:
            problems.append(f"{ex_id}: the table lists no file a student may edit ('edit')")
        exercises.append(Exercise(ex_id, folders[ex_id], entry.get("title", ex_id), edit, tuple(tasks),
                                  _names(entry, ex_id, problems), entry.get("files") is True))
    for ex_id in sorted(set(folders) - set(table)):
        problems.append(f"{folders[ex_id]}/: the folder has no entry in {TABLE}")
    if problems:
        raise CatalogError("\n".join(problems))
    return exercises


def _names(entry, where, problems):
    names = entry.get("forbid", [])
    if not isinstance(names, list) or not all(isinstance(n, str) and n.strip(".") for n in names):
        problems.append(f"{where}: 'forbid' must be a list of dotted names or '.attribute' names")
        return ()
    return tuple(names)


def markers(exercises):
    """{marker: Task} over every exercise."""
    return {task.marker: task for exercise in exercises for task in exercise.tasks}


def select(exercises, only):
    """The exercises named in ``only`` (ids like "ex03"), all when it is empty."""
    if not only:
        return exercises
    known = {e.id for e in exercises}
    unknown = sorted(set(only) - known)
    if unknown:
        raise CatalogError(f"--only: no exercise {', '.join(unknown)} (there are {', '.join(sorted(known))})")
    return [e for e in exercises if e.id in only]
