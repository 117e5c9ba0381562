"""Grading the class competition (``minishare.golf``): a submission is one entry, read as data.

A golf submission is a folder holding one file ``entry.json`` (at its top or in a folder below it,
as Gradescope unpacks an upload): the declaration ``minishare.golf.entry`` reads, known fields of
stated types only. Nothing else of the submission is opened, and nothing of it is imported, run
or copied. Training, quantization, the byte count and bits per byte on the hidden test split all
run here, in the grader's own process, by ``minishare.golf.run.grade``: the value on the
leaderboard is that computation's, so nothing a submission prints or writes (a results.json of its
own, a line that looks like a score) takes part. The one exception is the code track
(``golf_code``): an entry whose model is ``"code": "model.py"`` has that module beside it, which runs
in the sandbox and returns data only; the bytes, the CPU time, the stored weights and the score
are still decided here.

The limits are the competition's own (``golf.run.BUDGET_BYTES`` and ``CPU_SECONDS``), the same for
every submission. The score comes from the thresholds of ``SCORE`` (the one place they are stated),
against the course's no-model baselines: the unigram and bigram counts of the training tokens
(``minishare.analysis.count_lm``), at V = 256, scored on the same test stream in bits per byte
(which does not depend on V, so one pair of thresholds serves every entry).

    a valid entry, within the byte budget, trained and scored     4 points
    bits per byte below the unigram counts'                      +3 points
    bits per byte below the bigram counts'                       +3 points

Gradescope's ``results.json`` carries the three as ``tests`` and, for a scored entry, the
``leaderboard`` field: bits per byte (ascending: lower is better), stored bytes and training CPU
seconds. ``batch`` writes every submission's row as ``leaderboard.csv``, sorted by bits per byte,
and runs the top entries again on a second seed, reporting both.
"""
import csv
import dataclasses
import json
import math
import os

from minishare.analysis import golf_baselines
from minishare import safeio
from minishare.errors import InvalidValue
from minishare.files import atomic_write
from minishare.golf import run as golf_run
from minishare.golf.entry import load_entry
from minishare.grader import golf_code

ENTRY_FILE = "entry.json"
SPLIT = "test"                  # the leaderboard's split: the grader's, never given to an entry
TOP = 3                         # entries of ``batch`` run again on a second seed
# (test name, points, the baseline whose bits per byte an entry must beat; None: a valid entry)
SCORE = (("a valid entry, within the byte budget, trained and scored", 4, None),
         ("bits per byte below the unigram counts' (add-one)", 3, "unigram"),
         ("bits per byte below the bigram counts' (add-0.1 toward the unigram)", 3, "bigram"))
COLUMNS = ("rank", "submission", "name", "bits_per_byte", "bytes", "train_cpu_seconds", "steps_done",
           "stopped_at_limit", "precision", "seed", "bits_per_byte_second_seed", "second_seed", "score",
           "notes")


def find_entry(submission):
    """The path of the submission's one ``entry.json``; ``InvalidValue`` when there is none, or more
    than one, or it is not a regular file (a symlink could point at a file of the grader's)."""
    if not os.path.isdir(submission):
        raise FileNotFoundError(f"{submission} is not a folder")
    found = []
    for directory, subdirs, names in os.walk(submission):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith((".", "__")))
        found += [os.path.join(directory, n) for n in names if n == ENTRY_FILE]
    if len(found) != 1:
        where = f" ({', '.join(sorted(os.path.relpath(p, submission) for p in found)[:3])})" if found else ""
        raise InvalidValue(f"a golf submission holds exactly one {ENTRY_FILE}; found {len(found)}{where}")
    if os.path.islink(found[0]):
        raise InvalidValue(f"{os.path.relpath(found[0], submission)} is a symlink; upload the file itself")
    return found[0]


def baselines(corpus="grammar", draw=0):
    """{"unigram", "bigram"}: bits per byte of the count models of the training tokens on the test
    stream (``analysis.golf_baselines``; ``draw``: the grammar corpus's seed)."""
    return golf_baselines.baselines(corpus, SPLIT, draw)


def read_draw(path):
    """The grammar corpus's seed in the JSON file ``path`` (``{"draw": n}``; a Gradescope zip's own)."""
    value = safeio.load_json(path, 1024)
    if not isinstance(value, dict) or set(value) != {"draw"}:
        raise InvalidValue(f"{path}: must hold {{\"draw\": n}} only")
    return safeio.integer(value["draw"], f"{path}: draw", low=0, high=2 ** 32 - 1)


def grade_submission(submission, seed=None, corpus="grammar", draw=0, allow_root=False):
    """(row, problem): the leaderboard row of the submission's entry on the test split (``seed``
    replaces the recipe's; ``draw``: the grammar corpus's), or (None, the one-line reason it was
    refused). A code-track entry's module runs in the sandbox (``golf_code``); ``allow_root`` lets
    it run as root, for a local test of one's own files only."""
    try:
        path = find_entry(submission)
        entry = load_entry(path)
        if seed is not None:
            entry = dataclasses.replace(entry, recipe={**entry.recipe, "seed": seed})
        if entry.code:
            row = golf_code.grade(entry, os.path.dirname(path), SPLIT, corpus, draw, allow_root=allow_root)
        else:
            row = golf_run.grade(entry, SPLIT, corpus=corpus, draw=draw)
    except (InvalidValue, FileNotFoundError) as err:
        return None, str(err)
    if not math.isfinite(row["bits_per_byte"]):
        return None, f"bits per byte is {row['bits_per_byte']} (training diverged); not scored"
    return row, None


def score(row, floors):
    """[(test name, points earned, points, output)] of ``row`` (None: refused) against ``floors``
    ({"unigram", "bigram"}: the baselines' bits per byte)."""
    tests = []
    for name, points, baseline in SCORE:
        if row is None:
            tests.append((name, 0, points, "not scored: the entry was refused"))
        elif baseline is None:
            tests.append((name, points, points, f"{row['bytes']:,} bytes of {row['budget_bytes']:,}"))
        else:
            beat = row["bits_per_byte"] < floors[baseline]
            tests.append((name, points if beat else 0, points,
                          f"{row['bits_per_byte']:.4f} against {floors[baseline]:.4f} bits per byte"))
    return tests


def results(row, problem, floors):
    """Gradescope's results.json as a dict; ``leaderboard`` for a scored entry only."""
    tests = [{"name": name, "score": got, "max_score": points, "output": output, "visibility": "visible"}
             for name, got, points, output in score(row, floors)]
    out = {"score": sum(t["score"] for t in tests), "output": problem or summary(row),
           "stdout_visibility": "hidden", "tests": tests}
    if row is not None:
        out["leaderboard"] = [{"name": "bits per byte", "value": row["bits_per_byte"], "order": "asc"},
                              {"name": "bytes", "value": row["bytes"], "order": "asc"},
                              {"name": "training CPU seconds", "value": round(row["train_cpu_seconds"], 2),
                               "order": "asc"}]
    return out


def summary(row):
    """One line of a scored row, as the student sees it."""
    stop = ", stopped at the CPU limit" if row["stopped_at_limit"] else ""
    return (f"entry {row['name']!r}: {row['bits_per_byte']:.4f} bits per byte on the test split; "
            f"{row['bytes']:,} bytes at {row['precision']}; {row['train_cpu_seconds']:.1f} CPU seconds, "
            f"{row['steps_done']} of {row['steps']} steps{stop}; seed {row['seed']}")


def ranked(graded):
    """The scored submissions of ``graded`` ({submission: (row, problem, score)}), best first: by bits
    per byte, then fewer bytes, then name."""
    scored = [s for s in graded if graded[s][0]]
    return sorted(scored, key=lambda s: (graded[s][0]["bits_per_byte"], graded[s][0]["bytes"], s))


def second_seed_of(seed, second_seed=None):
    """The seed of an entry's second run: ``second_seed``, or by default its recipe's seed + 1."""
    return (seed + 1) % 2 ** 32 if second_seed is None else second_seed


def leaderboard(graded, second):
    """CSV rows (``COLUMNS``) of ``graded``, ranked, then the refused in name order; ``second``:
    {submission: (seed, row, problem)} of the runs on a second seed."""
    rows = []
    for rank, name in enumerate(ranked(graded), 1):
        row, _, points = graded[name]
        seed, again, problem = second.get(name, ("", None, ""))
        rows.append([rank, name, row["name"], repr(row["bits_per_byte"]), row["bytes"],
                     f"{row['train_cpu_seconds']:.2f}", row["steps_done"], row["stopped_at_limit"],
                     row["precision"], row["seed"], repr(again["bits_per_byte"]) if again else "", seed, points,
                     problem or ""])
    refused = sorted(s for s in graded if not graded[s][0])
    return rows + [["", name] + [""] * 10 + [graded[name][2], graded[name][1]] for name in refused]


def batch(submissions, out, top=TOP, second_seed=None, corpus="grammar", say=print, draw=0, allow_root=False):
    """Grade each sub-folder of ``submissions``: ``out/NAME/results.json`` and ``out/leaderboard.csv``
    (``COLUMNS``); the ``top`` best run again on a second seed (``second_seed_of``)."""
    if not os.path.isdir(submissions):
        raise FileNotFoundError(f"batch: {submissions} is not a folder")
    names = sorted(n for n in os.listdir(submissions)
                   if os.path.isdir(os.path.join(submissions, n)) and not n.startswith("."))
    floors, graded = baselines(corpus, draw), {}
    for name in names:
        row, problem = grade_submission(os.path.join(submissions, name), corpus=corpus, draw=draw,
                                        allow_root=allow_root)
        doc = results(row, problem, floors)
        write_json(os.path.join(out, name, "results.json"), doc)
        graded[name] = (row, problem, doc["score"])
        say(f"{name}: {row['bits_per_byte']:.4f} bits per byte" if row else f"{name}: refused: {problem}")
    second = {}
    for name in ranked(graded)[:top]:
        seed = second_seed_of(graded[name][0]["seed"], second_seed)
        second[name] = (seed, *grade_submission(os.path.join(submissions, name), seed, corpus, draw, allow_root))
        again, problem = second[name][1:]
        say(f"{name}, seed {seed}: " + (f"{again['bits_per_byte']:.4f} bits per byte" if again else problem))
    path = os.path.join(out, "leaderboard.csv")
    with atomic_write(path, newline="") as f:
        writer = csv.writer(f)
        writer.writerow(COLUMNS)
        writer.writerows(leaderboard(graded, second))
    say(f"wrote {path} ({len(names)} submissions, {len(second)} run on a second seed)")
    return graded, second


def write_json(path, value):
    """``value`` as JSON at ``path``, written atomically."""
    with atomic_write(path) as f:
        json.dump(value, f, indent=1)
