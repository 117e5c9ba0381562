"""``python -m minishare golf ENTRY``: score an entry on the visible validation split, as the grader
would on its hidden test split, printing the three budgets: bytes, training CPU time, data."""
import argparse
import contextlib

from minishare.errors import MissingPackage
from minishare.golf.entry import load_entry
from minishare.golf.run import BUDGET_BYTES, CPU_SECONDS, grade
from minishare.golf.splits import SETTINGS
from minishare.threads import get_num_threads, set_num_threads


def _positive_number(text):
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {text!r}")
    return value


def add_parser(sub, positive_int):
    """The ``golf`` subcommand on the command line's subparsers ``sub``."""
    g = sub.add_parser("golf", help="score a competition entry (a JSON declaration) on the validation split",
                       description="Build, train, store and score the entry as the grader does, on the "
                       "visible validation split; prints its bits per byte and its three budgets.")
    g.add_argument("entry", metavar="ENTRY", help="the entry's JSON file")
    g.add_argument("--budget-bytes", type=positive_int, default=BUDGET_BYTES,
                   help="stored-bytes budget (default %(default)s)")
    g.add_argument("--cpu-seconds", type=_positive_number, default=CPU_SECONDS,
                   help="training CPU-time limit (default %(default)s)")
    g.add_argument("--corpus", choices=SETTINGS, default="grammar",
                   help="the setting: the grammar corpus or natural text, Python's documentation (default %(default)s)")
    g.add_argument("--no-progress", action="store_true")
    return g


def command(args):
    entry = load_entry(args.entry)
    with _one_blas_thread():
        row = grade(entry, "validation", args.budget_bytes, args.cpu_seconds, args.corpus,
                    progress=not args.no_progress)
    stop = " (stopped at the limit)" if row["stopped_at_limit"] else ""
    print(f"entry {row['name']!r}, seed {row['seed']}")
    print(f"  bytes:   {row['bytes']:,} of {row['budget_bytes']:,} at {row['precision']}")
    print(f"  compute: {row['train_cpu_seconds']:.1f} of {row['cpu_seconds_limit']:g} CPU seconds, "
          f"{row['steps_done']} of {row['steps']} steps{stop}")
    print(f"  data:    the training split of {args.corpus} only ({row['train_documents']} documents), "
          f"V = {row['vocab_size']}")
    print(f"validation bits per byte: {row['bits_per_byte']:.4f} "
          f"({row['scored_tokens']:,} tokens, {row['scored_bytes']:,} bytes)")


@contextlib.contextmanager
def _one_blas_thread():
    """The grader's one BLAS thread while the entry runs, the caller's afterwards. Without
    threadpoolctl nothing changes: ``time.process_time`` counts every thread's CPU time, so more
    threads buy an entry no more compute."""
    try:
        previous = get_num_threads()
        set_num_threads(1)
    except MissingPackage:
        previous = None
    try:
        yield
    finally:
        if previous is not None:
            set_num_threads(previous)
