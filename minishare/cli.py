"""The command line: ``python -m minishare {train,count,plan,reproduce,layerwise,golf} --help``.

A mistake in what the user gave (a ``minishare.errors.MinishareError``: a bad argument, a
configuration, a file; or an ``OSError``) gets one line on stderr and exit status 2, never a
traceback; any other error is a bug, and shows its traceback. A training run that diverges ends
with one line and status 1, as does running out of memory. Ctrl-C (SIGINT), SIGTERM and SIGHUP (a
closed terminal) end every command with one line and status 128 + the signal's number (130, 143,
129); a training run saves first and says how to continue (``train``: with ``--resume``, where a
checkpoint exists; ``reproduce``: by running the same command again). A signal the shell started
the process ignoring (``nohup``'s SIGHUP, a background job's SIGINT) stays ignored.

A flag not given takes the default of the function it is passed to (``run_training``, whose
training-loop defaults are ``TrainConfig``'s, or ``layerwise.pretrained_figure``); ``--help``
shows them.
"""
import argparse
import inspect
import json
import os
import signal
import sys
import threading
import traceback

from minishare import distributed, sharing
from minishare.analysis import layerwise
from minishare.errors import InvalidValue, MinishareError, MissingPackage
from minishare.run import folder as run_folder
from minishare.run.build import SEQ2SEQ_TASKS, RunDefaults
from minishare.run.errors import BadArgument, TrainingInterrupted
from minishare.run.training import run_training
from minishare.files import atomic_write
from minishare.golf import cli as golf_cli
from minishare.threads import set_num_threads
from minishare.train import OPTIMIZERS

MODEL_TASKS = ("pretrain", "lm", *SEQ2SEQ_TASKS)
# train's flags that define a run (the arguments a run records, but the model fields, set one by one
# by MODEL_FLAGS, and the warm-up, which has no flag): for those not given a fresh run takes
# run_training's defaults, a resumed run (--resume) its own values
RUN_FLAGS = tuple(name for name in run_folder.ARGUMENTS if name not in ("overrides", "warmup_steps"))
MODEL_FLAGS = {"sharing": "sharing", "embedding_size": "embedding_size", "hidden_size": "hidden_size",
               "num_layers": "num_hidden_layers", "num_unique_layers": "num_unique_layers",
               "norm_position": "norm_position"}


def _schedule(text):
    """A sharing argument: a strategy name, or an explicit schedule such as 0,1,1,0."""
    if "," in text or text.isdigit():
        try:
            return [int(v) for v in text.split(",")]
        except ValueError:
            raise argparse.ArgumentTypeError(f"bad schedule {text!r}: write set indices like 0,1,1,0")
    return text


def _positive(text, most=None):
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    if most is not None and int(text) > most:
        raise argparse.ArgumentTypeError(f"must be at most {most:,}, got {text}")
    return int(text)


def _at_most(most):
    """A flag's type: a positive integer up to ``most``, refused by argparse naming the limit."""
    return lambda text: _positive(text, most)


MAX_THREADS = 1024          # BLAS threads: more than any machine's cores
# layerwise keeps every layer's activations, attention probabilities (B, heads, T, T) among them, of
# the whole batch: 256 sequences of BERT-base's 512 tokens take about 3 GiB a layer
MAX_LAYERWISE_BATCH = 256


def _defaults(function):
    """{argument: default} of ``function``'s keyword arguments: what its flags show in --help."""
    return {name: parameter.default for name, parameter in inspect.signature(function).parameters.items()
            if parameter.default is not inspect.Parameter.empty}


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose refusal is one line: the problem and where the flags are listed
    (argparse's own prints the whole usage first, some twenty lines above the one that matters)."""

    def error(self, message):
        """Print ``message`` as one line on stderr and exit with status 2."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser():
    parser = Parser(prog="python -m minishare",
                    description="minishare: parameter sharing in Transformers, runnable.")
    sub = parser.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="train a model (ALBERT pre-training, an LM or a toy seq2seq task)",
                       description="Train a model into --out. With --resume, flags not given take the "
                       "run's own values; a flag that contradicts the run is refused. Flags that may "
                       "change on resume: --steps (and with it the length of the lr schedule), "
                       "--eval-every, --save-every, --no-progress.")
    d = _defaults(run_training)
    t.add_argument("--task", choices=MODEL_TASKS,
                   help=f"pretrain: ALBERT MLM + SOP/NSP; lm: decoder-only LM; others: encoder-decoder "
                   f"(default {d['task']})")
    t.add_argument("--preset", help=f"AlbertConfig preset (pretrain; default {d['preset']})")
    t.add_argument("--sharing", type=_schedule, default=None,
                   help=f"{', '.join(sharing.STRATEGIES)} or a schedule like 0,1,1,0")
    t.add_argument("--embedding-size", "-E", type=int, help="E (factorized embedding size)")
    t.add_argument("--hidden-size", "-H", type=int, help="H")
    t.add_argument("--num-layers", "-N", type=int, help="N layer positions")
    t.add_argument("--num-unique-layers", "-M", type=int, help="M distinct layers (sequence/cycle/cycle-rev/cycle-rev-code)")
    t.add_argument("--norm-position", choices=("post", "pre"))
    t.add_argument("--objective", choices=("sop", "nsp"),
                   help=f"second pre-training loss (default {d['objective']})")
    t.add_argument("--corpus", help="'default' (Python's docs), 'grammar', or a UTF-8 file/folder "
                   f"(default: {d['corpus']})")
    t.add_argument("--vocab-size", type=int, help=f"V of the BPE tokenizer trained on the corpus "
                   f"(default {d['vocab_size']})")
    t.add_argument("--seq-len", type=int, help=f"default {d['seq_len']}")
    t.add_argument("--steps", type=int, help=f"default {d['steps']}; may change on resume")
    t.add_argument("--batch-size", type=int, help=f"default {d['batch_size']}")
    t.add_argument("--lr", type=float, help=f"peak learning rate (default {d['lr']})")
    t.add_argument("--optimizer", choices=tuple(OPTIMIZERS), help=f"default {d['optimizer']}")
    t.add_argument("--eval-every", type=int, help=f"default {d['eval_every']}; may change on resume")
    t.add_argument("--save-every", type=int, help="write checkpoint and history every so many steps "
                   f"(default {d['save_every']}); may change on resume")
    t.add_argument("--seed", type=int, help=f"default {d['seed']}")
    t.add_argument("--out", default=d["out"], help="output folder (history, checkpoint, tokenizer; "
                   "default %(default)s)")
    t.add_argument("--resume", action="store_true", help="continue the run in OUT from its checkpoint")
    t.add_argument("--overwrite", action="store_true", help="replace the run already in OUT")
    t.add_argument("--no-progress", action="store_true")
    t.add_argument("--data-parallel", action="store_true",
                   help="under `mpiexec -n K`: K processes share each global batch of --batch-size rows "
                   "(needs mpi4py: pip install mpi4py mpich); rank 0 writes the run")
    _threads_flag(t, "; with --data-parallel, of each rank")

    c = sub.add_parser("count", help="parameter tables: presets, ALBERT Tables 1/3/4, or one configuration")
    c.add_argument("--preset", help="count one preset (with the overrides below) instead of the tables")
    c.add_argument("--sharing", type=_schedule)
    c.add_argument("--embedding-size", "-E", type=int)
    c.add_argument("--hidden-size", "-H", type=int)
    c.add_argument("--num-layers", "-N", type=int)
    c.add_argument("--num-unique-layers", "-M", type=int)

    p = sub.add_parser("plan", help="print or draw a sharing plan")
    p.add_argument("sharing", type=_schedule, help=f"{', '.join(sharing.STRATEGIES)} or e.g. 0,1,1,0")
    p.add_argument("--num-layers", "-N", type=int, help="N (not needed for an explicit schedule)")
    p.add_argument("--num-unique-layers", "-M", type=int)
    p.add_argument("--draw", metavar="FILE", help="save the positions x parameter-sets grid (PNG/SVG)")

    w = sub.add_parser("layerwise", help="ALBERT's Figure 1 for a pretrained ALBERT or BERT in Hugging "
                       "Face's layout (a folder with config.json and model.safetensors)")
    w.add_argument("--pretrained", required=True, metavar="DIR", help="the model's folder")
    w.add_argument("--input-ids", metavar="FILE", help="ids from the model's own tokenizer: a .npy array "
                   "(B, T) or a text file, one sequence of whitespace-separated ids per line (default: "
                   "passages of the built-in English corpus through the folder's tokenizer.json, if it "
                   "has one and the tokenizers package is installed; else random ids, with a note)")
    d = _defaults(layerwise.pretrained_figure)
    w.add_argument("--batch-size", type=_at_most(MAX_LAYERWISE_BATCH), default=d["batch_size"],
                   help="sequences without --input-ids: text passages or random (default %(default)s)")
    w.add_argument("--seq-len", type=_positive, default=d["seq_len"],
                   help="tokens per sequence without --input-ids (default %(default)s)")
    w.add_argument("--seed", type=int, default=d["seed"], help="default %(default)s")
    w.add_argument("--out", default="runs/layerwise", help="folder for layerwise.json and layerwise.png/.svg")
    _threads_flag(w)

    r = sub.add_parser("reproduce", help="run the experiments and write the report with its figures")
    r.add_argument("--out", default="runs/reproduce")
    tier = r.add_mutually_exclusive_group()
    tier.add_argument("--quick", action="store_true", help="small settings that finish in minutes (CI)")
    tier.add_argument("--long", action="store_true",
                      help="more seeds and updates, for a night or a GPU (its estimate is printed first)")
    r.add_argument("--only", action="append", help="run only this experiment (repeatable)")
    r.add_argument("--jobs", "-j", type=int, default=1,
                   help="training runs at once, one process and one BLAS thread each (e.g. the number of cores)")
    r.add_argument("--no-progress", action="store_true")
    r.add_argument("--estimate", action="store_true",
                   help="print how long the training left to do will take on this machine, then stop")
    _threads_flag(r, "; --jobs workers use one each")
    golf_cli.add_parser(sub, _positive)
    return parser


def _threads_flag(command, note=""):
    command.add_argument("--threads", type=_at_most(MAX_THREADS), metavar="N",
                         help="BLAS threads of this process (minishare.set_num_threads; default: the "
                         f"library's own, one per core, or OPENBLAS_NUM_THREADS){note}")


def _overrides(args):
    return {field: getattr(args, arg) for arg, field in MODEL_FLAGS.items()
            if getattr(args, arg, None) is not None}


def _flag(argument):
    """run_training's keyword (or ``overrides.<model field>``) -> the train flag that sets it."""
    field = argument.removeprefix("overrides.")
    dest = {f: arg for arg, f in MODEL_FLAGS.items()}.get(field, field)
    return "--" + dest.replace("_", "-")


def cmd_count(args):
    from minishare.analysis import params
    from minishare.models import AlbertConfig
    if args.preset:
        config = AlbertConfig.from_preset(args.preset, **_overrides(args))
        print(f"{args.preset} {_overrides(args) or ''}: {params.count_parameters(config):,} parameters")
        print(f"plan: {config.plan()}")
        return
    if _overrides(args):
        flags = ", ".join("--" + arg.replace("_", "-") for arg in MODEL_FLAGS if getattr(args, arg, None) is not None)
        raise InvalidValue(f"{flags}: such a flag changes one preset's configuration and means nothing for "
                           "the tables; name the preset, e.g. --preset albert-base")
    print("ALBERT (Lan et al., 2019), V = 30,000, encoder with pooler: our exact counts beside the "
          "paper's rounded ones\n")
    print(params.format_table(params.albert_tables(), ["table", "configuration", "parameters", "paper"]))
    print("\nPresets\n")
    print(params.format_table(params.preset_table(), ["preset", "parameters"]))


def cmd_plan(args):
    plan = sharing.Plan.build(args.sharing, args.num_layers, args.num_unique_layers)
    print(f"{plan.name}: {plan.n_layers} positions, sets per component "
          f"{ {c: plan.n_sets(c) for c in ('attention', 'ffn')} }")
    print(plan)
    if args.draw:
        try:
            import matplotlib
        except ImportError:
            raise MissingPackage("--draw needs matplotlib: pip install matplotlib") from None
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        folder = os.path.dirname(os.path.abspath(args.draw))
        if not os.path.isdir(folder):
            raise FileNotFoundError(f"cannot draw to {args.draw}: folder {folder} does not exist")
        from minishare.analysis.plan_figure import draw_plan
        ax = draw_plan(plan)
        kind, kinds = os.path.splitext(args.draw)[1][1:], ax.figure.canvas.get_supported_filetypes()
        if kind and kind.lower() not in kinds:      # (matplotlib's own refusal is a bare ValueError)
            plt.close(ax.figure)
            raise InvalidValue(f"cannot draw to {args.draw}: matplotlib writes no .{kind} files; "
                               f"name a {', '.join('.' + k for k in sorted(kinds))} file")
        with atomic_write(args.draw, "wb") as f:
            ax.figure.savefig(f, format=kind or None, bbox_inches="tight")
        plt.close(ax.figure)
        print(f"drawn to {args.draw}")


def cmd_train(args):
    launched = distributed.launched_ranks()
    if launched > 1 and not args.data_parallel:
        raise InvalidValue(f"started by an MPI launcher as {launched} processes without --data-parallel: "
                           "each would train the whole run and write the same files; add --data-parallel")
    if args.resume and args.overwrite:
        raise InvalidValue("--resume and --overwrite contradict each other: --resume continues the run in "
                           f"{args.out}, --overwrite replaces it; give one")
    given = {name: getattr(args, name) for name in RUN_FLAGS if getattr(args, name) is not None}
    if args.resume:
        saved = run_folder.saved_run(args.out)
        _check_meaningful(given, given.get("task", saved["arguments"]["task"]))
        arguments = {**saved["arguments"], **given,
                     "overrides": {**saved["arguments"]["overrides"], **_overrides(args)}}
        conflicts = run_folder.resume_conflicts(saved, {**given, "overrides": _overrides(args)})
        if conflicts:
            raise InvalidValue(f"--resume: the run in {args.out} was trained with other settings: "
                               + "; ".join(f"{_flag(name)} {_show(new)} (the run has {_show(old)})"
                                           for name, new, old in conflicts))
    else:
        _check_meaningful(given, given.get("task", RunDefaults.task))
        arguments = {**given, "overrides": _overrides(args)}
    result = run_training(**arguments, out=args.out, resume=args.resume, overwrite=args.overwrite,
                          progress=not args.no_progress, data_parallel=args.data_parallel)
    trainer = result["trainer"]
    if trainer.data_parallel is None or trainer.data_parallel.rank == 0:
        print(json.dumps(result["final"], indent=1))
        print(f"history, checkpoint and config written to {args.out}")


# train's flags that only some tasks read: given for another task, a flag would be silently ignored
TASK_FLAGS = {"corpus": ("pretrain", "lm"), "vocab_size": ("pretrain", "lm"), "objective": ("pretrain",),
              "preset": ("pretrain",)}


def _check_meaningful(given, task):
    """Refuse a flag the task does not read, naming both (a toy task generates its own data and
    vocabulary; only ALBERT pre-training has a second objective and presets)."""
    for name, tasks in TASK_FLAGS.items():
        if name in given and task not in tasks:
            raise InvalidValue(f"{_flag(name)} {_show(given[name])} has no meaning for --task {task} (only for "
                               f"{' and '.join(tasks)}): leave it out")


def _show(value):
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def cmd_layerwise(args):
    record = layerwise.pretrained_figure(args.pretrained, args.out, args.input_ids, args.batch_size,
                                         args.seq_len, args.seed)
    print(f"{'layer':>5}  {'L2 distance':>11}  {'angle (deg)':>11}")
    for l, (d, a) in enumerate(zip(record["l2"], record["cosine_degrees"]), start=1):
        print(f"{l:>5}  {d:>11.4f}  {a:>11.4f}")
    print(f"numbers and figure written to {args.out}/layerwise.json, layerwise.png, layerwise.svg")


def cmd_reproduce(args):
    from minishare.experiments import reproduce, runs
    runs.check_jobs(args.jobs)
    report = reproduce.run(args.out, quick=args.quick, only=args.only, progress=not args.no_progress,
                           jobs=args.jobs, long=args.long, estimate_only=args.estimate)
    if report is not None:
        print(f"report: {report}")


class _Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP outside a training run's own handling: ends the command like Ctrl-C."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signal = signal.Signals(signum)


def _stop(signum, frame):
    raise _Stopped(signum)


def main(argv=None):
    """The command line; returns its exit status. SIGTERM and SIGHUP end it like Ctrl-C while it
    runs (their handlers are this call's, restored when it returns)."""
    main_thread = threading.current_thread() is threading.main_thread()
    previous = {number: signal.signal(number, _stop) for number in (signal.SIGTERM, signal.SIGHUP)
                if main_thread and signal.getsignal(number) not in (signal.SIG_IGN, None)}
    try:
        return _main(argv)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _main(argv):
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except KeyboardInterrupt as stop:
        print(f"{parser.prog}: interrupted", file=sys.stderr)
        return 128 + getattr(stop, "signal", signal.SIGINT)
    commands = {"train": cmd_train, "count": cmd_count, "plan": cmd_plan, "reproduce": cmd_reproduce,
                "layerwise": cmd_layerwise, "golf": golf_cli.command}
    prefix = f"{parser.prog} {args.command}"
    together = getattr(args, "data_parallel", False) and distributed.launched_ranks() > 1
    try:
        status = _run(commands[args.command], args, parser, prefix)
    except Exception:
        if not together:
            raise
        traceback.print_exc()           # a bug, on one rank: no other rank is left waiting for it
        status = 1
    if status and together:
        distributed.end_together(status)
    return status


def _run(command, args, parser, prefix):
    """``command(args)``; a mistake of the user's is one line on stderr and an exit status, a bug
    goes on with its traceback (see the module)."""
    try:
        if getattr(args, "threads", None) is not None:
            set_num_threads(args.threads)
        command(args)
    except TrainingInterrupted as stop:
        resumable = args.command == "train" and os.path.exists(os.path.join(stop.out, "checkpoint.npz"))
        print(f"{prefix}: {stop}" + (f"; continue with: {parser.prog} train --out {stop.out} --resume"
                                     if resumable else ""), file=sys.stderr)
        return 128 + stop.signal
    except KeyboardInterrupt as stop:
        number = getattr(stop, "signal", signal.SIGINT)
        print(f"{prefix}: interrupted{'' if number == signal.SIGINT else f' by {number.name}'}", file=sys.stderr)
        return 128 + number
    except BadArgument as err:
        print(f"{prefix}: error: argument {_flag(err.name)}: {err.rule}, got {err.value}", file=sys.stderr)
        return 2
    except FloatingPointError as err:    # a diverging run (TrainingDiverged), or NumPy's overflow
        print(f"{prefix}: error: {err}", file=sys.stderr)
        return 1
    except MemoryError as err:
        print(f"{prefix}: error: out of memory{f' ({err})' if str(err) else ''}: try a smaller model, "
              "batch or sequence length", file=sys.stderr)
        return 1
    except BrokenPipeError:         # the reader left (``count | head``): nothing more to say to it
        # stdout points at nothing from here, so the interpreter's last flush does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (MinishareError, OSError) as err:     # not a bug: anything else shows its traceback
        # an OSError's args start with its errno; its str names the problem and the file
        message = str(err) if isinstance(err, OSError) or not err.args else err.args[0]
        print(f"{prefix}: error: {message}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
