"""The command line: ``python -m minishare {train,count,plan,reproduce} --help``.

Bad arguments get one line on stderr and exit status 2, never a traceback.
"""
import argparse
import json
import sys

from minishare import sharing

MODEL_TASKS = ("pretrain", "lm", "copy", "reverse", "sort", "addition", "scan")


def _schedule(text):
    """A sharing argument: a strategy name, or an explicit schedule such as 0,1,1,0."""
    if "," in text or text.isdigit():
        try:
            return [int(v) for v in text.split(",")]
        except ValueError:
            raise argparse.ArgumentTypeError(f"bad schedule {text!r}: write set indices like 0,1,1,0")
    return text


def build_parser():
    parser = argparse.ArgumentParser(prog="python -m minishare",
                                     description="minishare: parameter sharing in Transformers, runnable.")
    sub = parser.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="train a model (ALBERT pre-training, an LM or a toy seq2seq task)")
    t.add_argument("--task", choices=MODEL_TASKS, default="pretrain",
                   help="pretrain: ALBERT MLM + SOP/NSP; lm: decoder-only LM; others: encoder-decoder")
    t.add_argument("--preset", default="albert-tiny", help="AlbertConfig preset (pretrain)")
    t.add_argument("--sharing", type=_schedule, default=None,
                   help=f"{', '.join(sharing.STRATEGIES)} or a schedule like 0,1,1,0")
    t.add_argument("--embedding-size", "-E", type=int, help="E (factorized embedding size)")
    t.add_argument("--hidden-size", "-H", type=int, help="H")
    t.add_argument("--num-layers", "-N", type=int, help="N layer positions")
    t.add_argument("--num-unique-layers", "-M", type=int, help="M distinct layers (sequence/cycle/cycle-rev)")
    t.add_argument("--norm-position", choices=("post", "pre"))
    t.add_argument("--objective", choices=("sop", "nsp"), default="sop", help="second pre-training loss")
    t.add_argument("--corpus", default="default", help="'default' (Python's docs), 'grammar', or a UTF-8 file/folder")
    t.add_argument("--vocab-size", type=int, default=1000, help="V of the BPE tokenizer trained on the corpus")
    t.add_argument("--seq-len", type=int, default=64)
    t.add_argument("--steps", type=int, default=300)
    t.add_argument("--batch-size", type=int, default=32)
    t.add_argument("--lr", type=float, default=1e-3)
    t.add_argument("--optimizer", choices=("adamw", "lamb"), default="adamw")
    t.add_argument("--eval-every", type=int, default=100)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--out", default="runs/train", help="output folder (history, checkpoint, tokenizer)")
    t.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint.npz")
    t.add_argument("--no-progress", action="store_true")

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

    r = sub.add_parser("reproduce", help="run the experiments and write the report with its figures")
    r.add_argument("--out", default="runs/reproduce")
    r.add_argument("--quick", action="store_true", help="small settings that finish in minutes (CI)")
    r.add_argument("--only", action="append", help="run only this experiment (repeatable)")
    r.add_argument("--jobs", "-j", type=int, default=1,
                   help="training runs at once, one process and one BLAS thread each (e.g. the number of cores)")
    r.add_argument("--no-progress", action="store_true")
    return parser


def _overrides(args):
    fields = {"sharing": "sharing", "embedding_size": "embedding_size", "hidden_size": "hidden_size",
              "num_layers": "num_hidden_layers", "num_unique_layers": "num_unique_layers",
              "norm_position": "norm_position"}
    return {field: getattr(args, arg) for arg, field in fields.items()
            if getattr(args, arg, None) is not None}


def cmd_count(args):
    from minishare.analysis import params
    from minishare.models import AlbertConfig
    if args.preset:
        config = AlbertConfig.from_preset(args.preset, **_overrides(args))
        print(f"{args.preset} {_overrides(args) or ''}: {params.count_parameters(config):,} parameters")
        print(f"plan: {config.plan()}")
        return
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
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        ax = plan.draw()
        ax.figure.savefig(args.draw, bbox_inches="tight")
        plt.close(ax.figure)
        print(f"drawn to {args.draw}")


def cmd_train(args):
    from minishare import experiments
    result = experiments.run_training(
        task=args.task, preset=args.preset, overrides=_overrides(args), objective=args.objective,
        corpus=args.corpus, vocab_size=args.vocab_size, seq_len=args.seq_len, steps=args.steps,
        batch_size=args.batch_size, lr=args.lr, optimizer=args.optimizer, eval_every=args.eval_every,
        seed=args.seed, out=args.out, resume=args.resume, progress=not args.no_progress)
    print(json.dumps(result["final"], indent=1))
    print(f"history, checkpoint and config written to {args.out}")


def cmd_reproduce(args):
    from minishare.experiments import reproduce
    report = reproduce.run(args.out, quick=args.quick, only=args.only, progress=not args.no_progress,
                           jobs=args.jobs)
    print(f"report: {report}")


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    commands = {"train": cmd_train, "count": cmd_count, "plan": cmd_plan, "reproduce": cmd_reproduce}
    try:
        commands[args.command](args)
    except (ValueError, TypeError, OSError) as err:
        # an OSError's args start with its errno; its str names the problem and the file
        message = str(err) if isinstance(err, OSError) or not err.args else err.args[0]
        print(f"{parser.prog} {args.command}: error: {message}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
