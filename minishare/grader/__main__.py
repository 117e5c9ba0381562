"""``python -m minishare.grader {release,check,grade,batch,gradescope}``: see ``minishare.grader``.

``--golf`` on ``grade``, ``batch`` and ``gradescope`` grades the class competition instead of the
exercises: a submission is one ``entry.json`` (``minishare.grader.golf``), no exercises folder is
read, and ``batch`` writes ``leaderboard.csv``.

Problems are reported one line each on stderr with exit status 1; bad arguments exit with 2.
"""
import argparse
import csv
import os
import sys

from minishare.errors import InvalidValue
from minishare.golf.splits import SETTINGS
from minishare.grader import catalog


def build_parser():
    parser = argparse.ArgumentParser(prog="python -m minishare.grader",
                                     description="Release, check and grade the classroom exercises.")
    parser.add_argument("--source", default=catalog.default_root(),
                        help="the teacher's exercises folder (default: exercises/ of this checkout)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="exercises graded at a time (default 2)")
    sub = parser.add_subparsers(dest="command", required=True)

    def allow_root(p):
        p.add_argument("--allow-root", action="store_true",
                       help="as root, run submissions as root when no unprivileged user can run this "
                            "Python (a local test of your own files only, never students' work)")

    def with_only(p):
        p.add_argument("--only", action="append", metavar="exNN",
                       help="only this exercise (repeat for several; default: all)")
        return p

    def golf(p, corpus=True):
        p.add_argument("--golf", action="store_true",
                       help="the class competition: each submission is one entry.json, graded on the hidden "
                            "test split (see minishare.grader.golf)")
        if corpus:
            p.add_argument("--corpus", choices=SETTINGS, help="--golf: the competition's setting, the grammar "
                                                              "corpus or natural text (default: grammar)")
            p.add_argument("--draw-file", metavar="JSON", help="--golf: {\"draw\": n}, the seed of the grammar "
                                                              "stories (default: the course's, 0; a Gradescope zip "
                                                              "holds a secret one)")

    with_only(sub.add_parser("release", help="write the student copy (solutions, hidden cases and "
                                             "mutants left out)")).add_argument("--out", required=True, help="a new folder")
    with_only(sub.add_parser("check", help="solutions full marks, release zero, every mutant caught, nothing leaks"))
    g = with_only(sub.add_parser("grade", help="score one submission (laid out as the release, or flat)"))
    g.add_argument("submission")
    g.add_argument("--json", help="write Gradescope's results.json here")
    allow_root(g)
    golf(g)
    b = with_only(sub.add_parser("batch", help="score every submission in a folder (one sub-folder each)"))
    b.add_argument("submissions")
    b.add_argument("--out", required=True, help="folder for scores.csv and one results.json per submission")
    allow_root(b)
    golf(b)
    b.add_argument("--top", type=int, help="--golf: the best entries run again on a second seed (default 3)")
    b.add_argument("--second-seed", type=int, help="--golf: their second seed (default: each recipe's seed + 1)")
    z = with_only(sub.add_parser("gradescope", help="write Gradescope's autograder zip"))
    z.add_argument("--out", required=True, help="the zip to write, e.g. autograder.zip")
    golf(z, corpus=False)
    return parser


def golf_arguments(parser, args):
    """Refuse the exercises' flags with --golf and the competition's without it (exit 2)."""
    golf = getattr(args, "golf", False)
    if golf and args.only:
        parser.error("--only names exercises; --golf grades the competition, which has none")
    extra = [f for f in ("top", "second_seed", "corpus", "draw_file") if getattr(args, f, None) is not None]
    if extra and not golf:
        parser.error(f"--{extra[0].replace('_', '-')} is for --golf only")
    if golf and args.command == "batch" and args.top is not None and args.top < 0:
        parser.error(f"--top must be 0 or more, got {args.top}")
    if golf and args.command == "batch" and args.second_seed is not None and not 0 <= args.second_seed < 2 ** 32:
        parser.error(f"--second-seed must be in [0, 2**32), got {args.second_seed}")


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    golf_arguments(parser, args)
    if getattr(args, "golf", False):
        return golf_command(args)
    problems = []
    if args.source == catalog.default_root() and not os.path.isfile(os.path.join(args.source, catalog.TABLE)):
        # minishare installed without its checkout (pip install .): no exercises/ beside the package
        problems.append(f"no exercises at {args.source}: pass --source <checkout>/exercises, the exercises "
                        "folder of a minishare checkout")
    try:
        from minishare.grader import check, gradescope, grade, regions, release
    except ModuleNotFoundError as err:
        if not err.name or err.name.split(".")[0] == "minishare":
            raise                         # a module of ours missing is a bug: its traceback
        problems.insert(0, f"the exercises' tools need the package {err.name!r}, which is not installed: "
                           f"pip install {err.name}")
    if problems:
        for problem in problems:
            print(f"error: {problem}", file=sys.stderr)
        return 1
    try:
        if args.command == "release":
            written = release.release(args.source, args.out, args.only)
            print(f"released {written} files to {args.out}")
            return 0
        if args.command == "check":
            problems = check.check(args.source, args.only, args.jobs)
            for problem in problems:
                print(problem, file=sys.stderr)
            print(f"{len(problems)} problem(s)" if problems else "all checks passed")
            return 1 if problems else 0
        if args.command == "gradescope":
            print(f"wrote {gradescope.build(args.source, args.out, args.only)}")
            return 0
        if args.command == "batch":
            return batch(args.source, args.submissions, args.out, args.only, args.jobs, args.allow_root)
        rows, text, notes = grade.grade(args.source, args.submission, args.json, args.only, args.jobs,
                                        allow_root=args.allow_root)
        for note in notes:
            print(note, file=sys.stderr)
        print(text)
        return 0
    except (catalog.CatalogError, regions.RegionError, FileExistsError, FileNotFoundError,
            RuntimeError) as err:
        for line in str(err).splitlines():
            print(f"error: {line}", file=sys.stderr)
        return 1


def golf_command(args):
    """``grade --golf``, ``batch --golf``, ``gradescope --golf``: no exercises folder is read."""
    from minishare.grader import golf
    try:
        if args.command == "gradescope":
            from minishare.grader import gradescope      # pytest (for the exercises' cases) only here
            print(f"wrote {gradescope.build(None, args.out, golf=True)}")
            return 0
        corpus = args.corpus or "grammar"
        draw = golf.read_draw(args.draw_file) if args.draw_file else 0
        if args.command == "batch":
            golf.batch(args.submissions, args.out, golf.TOP if args.top is None else args.top, args.second_seed,
                       corpus, draw=draw, allow_root=args.allow_root)
            return 0
        row, problem = golf.grade_submission(args.submission, corpus=corpus, draw=draw, allow_root=args.allow_root)
        doc = golf.results(row, problem, golf.baselines(corpus, draw))
        if args.json:
            golf.write_json(args.json, doc)
        for test in doc["tests"]:
            print(f"{test['score']:>2g} / {test['max_score']:<2g}  {test['name']}: {test['output']}")
        print(f"{doc['score']:>2g} / {sum(t['max_score'] for t in doc['tests']):<2g}  {doc['output']}")
        return 0
    except (FileNotFoundError, FileExistsError, InvalidValue, RuntimeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1


def batch(root, submissions, out, only, jobs, allow_root=False):
    """Grade each sub-folder of ``submissions`` against one reference run: ``out/NAME/results.json``
    and ``out/scores.csv`` (a row per submission, a column per task, the total and its notes)."""
    from minishare.grader import grade, sandbox, suites
    from minishare.files import atomic_write
    if not os.path.isdir(submissions):
        raise FileNotFoundError(f"batch: {submissions} is not a folder")
    names = sorted(n for n in os.listdir(submissions)
                   if os.path.isdir(os.path.join(submissions, n)) and not n.startswith("."))
    exercises = catalog.select(catalog.load(root), only)
    markers = [t.marker for e in exercises for t in e.tasks]
    with sandbox.Sandbox(deny=[root], allow_root=allow_root) as box:
        refs = grade.reference_data(root, [suites.load_suite(root, e) for e in exercises], box, jobs)
        print(box.note, file=sys.stderr)             # after a worker ran: it says whether Landlock is on
        table = []
        for name in names:
            rows, _, notes = grade.grade(root, os.path.join(submissions, name),
                                         os.path.join(out, name, "results.json"), only, jobs, box, refs)
            scores = {m: sum(r["score"] for r in rows if r["task"] == m) for m in markers}
            total = f"{sum(scores.values()):g}"
            mine = [n for n in notes if n != box.note]     # the box's note is the batch's, printed once
            table.append([name] + [f"{scores[m]:g}" for m in markers] + [total, "; ".join(mine)])
            print(f"{name}: {total}")
    with atomic_write(os.path.join(out, "scores.csv"), newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["submission"] + markers + ["total", "notes"])
        writer.writerows(table)
    print(f"wrote {os.path.join(out, 'scores.csv')} ({len(names)} submissions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
