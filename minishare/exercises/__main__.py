"""``python -m minishare.exercises {release,check,grade}``: see ``minishare.exercises``.

Problems are reported one line each on stderr with exit status 1; bad arguments exit with 2.
"""
import argparse
import os
import sys

from minishare.exercises import catalog


def build_parser():
    parser = argparse.ArgumentParser(prog="python -m minishare.exercises",
                                     description="Release, check and grade the classroom exercises.")
    parser.add_argument("--source", default=catalog.default_root(),
                        help="the teacher's exercises folder (default: exercises/ of this checkout)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per test (default 60)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="pytest processes at a time (default 2)")
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("release", help="write the student copy (solutions and hidden tests stripped)")
    r.add_argument("--out", required=True, help="a new folder")
    sub.add_parser("check", help="solutions pass, stubs fail with NotImplementedError, nothing leaks")
    g = sub.add_parser("grade", help="score a submission (a folder laid out as the release)")
    g.add_argument("submission")
    g.add_argument("--json", help="write Gradescope's results.json here")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    from minishare.exercises import check, grade, regions, release
    try:
        if args.command == "release":
            written = release.release(args.source, args.out)
            print(f"released {written} files to {args.out}")
            return 0
        if args.command == "check":
            problems = check.check(args.source, args.timeout, args.jobs)
            for problem in problems:
                print(problem, file=sys.stderr)
            print(f"{len(problems)} problem(s)" if problems else "all checks passed")
            return 1 if problems else 0
        rows, text, notes = grade.grade(args.source, args.submission, args.json, args.timeout, args.jobs)
        for note in notes:
            print(note, file=sys.stderr)
        print(text)
        return 0
    except (catalog.CatalogError, regions.RegionError, FileExistsError, FileNotFoundError,
            RuntimeError) as err:
        for line in str(err).splitlines():
            print(f"error: {line}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
