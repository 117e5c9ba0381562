"""``run_training``: one training run with its outputs on disk, the run behind ``python -m minishare
train``. It checks its arguments, holds its run folder's lock (``minishare.run.folder``), builds
the task and model by name (``minishare.run.build``), trains with ``minishare.train.Trainer`` and
saves every ``save_every`` steps; a signal or a divergence ends it, saved, with one of
``minishare.run.errors``."""
import contextlib
import json
import os
import signal

import numpy    # only for numpy.errstate: the math runs on minishare.backend

from minishare import backend, checkpoint, data, distributed, random as ms_random, safeio
from minishare.errors import InvalidValue
from minishare.files import atomic_write
from minishare.run import folder as run_folder, state as run_state
from minishare.run.build import (SEQ2SEQ_TASKS, RunDefaults, build_model, corpus_documents, load_tokenizer,
                                 make_config, make_task, task_data)
from minishare.run.errors import BadArgument, TrainingDiverged, TrainingInterrupted
from minishare.train import TrainConfig, Trainer, save_history, stop_requests


# The signals that stop a run, saved; one the process ignores stays ignored (``nohup`` ignores
# SIGHUP, a shell's background job SIGINT, a worker of ``minishare.experiments.runs`` both: its
# parent asks it to stop with SIGTERM).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def run_training(task=RunDefaults.task, preset=RunDefaults.preset, overrides=None,
                 objective=RunDefaults.objective, corpus=RunDefaults.corpus,
                 vocab_size=RunDefaults.vocab_size, seq_len=RunDefaults.seq_len, steps=TrainConfig.steps,
                 batch_size=RunDefaults.batch_size, lr=TrainConfig.lr, optimizer=TrainConfig.optimizer,
                 eval_every=RunDefaults.eval_every, seed=RunDefaults.seed, out="runs/train", resume=False,
                 progress=True, warmup_steps=None, save_every=RunDefaults.save_every, overwrite=True,
                 data_parallel=False):
    """Train one model and write ``config.json``, ``tokenizer.json``, ``history.csv`` and
    ``checkpoint.npz`` (weights and training state) to ``out``; the checkpoint and history every
    ``save_every`` steps, atomically. With ``resume``, continue from that checkpoint exactly; the
    other arguments must then be the run's own, except those in ``run_folder.MAY_CHANGE_ON_RESUME``.
    With ``overwrite=False`` an existing run in ``out`` is refused. Every argument is checked
    before anything is written. While it runs it holds the lock of ``out``
    (``run_folder.locked``): a second run into ``out`` is refused with ``RunInUse``, and a
    resumed checkpoint must be this run's (``run_folder.identity``).

    SIGINT (Ctrl-C), SIGTERM or SIGHUP (a closed terminal) ends the run after the current step,
    saved, with ``TrainingInterrupted`` (``STOP_SIGNALS``); a loss or gradient that stops being finite ends it with
    ``TrainingDiverged``, keeping the last good checkpoint and writing the history.

    With ``data_parallel`` (run under ``mpiexec -n K``) the K ranks train on their shares of each
    global batch of ``batch_size`` rows (``minishare.distributed``); rank 0 alone writes ``out``.
    Returns {"model", "trainer", "history", "final"}.

    Defaults: the training loop's are ``TrainConfig``'s (``steps``, ``lr``, ``optimizer``, and for
    ``warmup_steps=None`` its ``default_warmup(steps)``; on ``resume`` the run's own), the rest
    ``RunDefaults``, ``eval_every`` among them (100, where a bare ``Trainer`` takes TrainConfig's
    50)."""
    arguments = dict(task=task, preset=preset, overrides=dict(overrides or {}), objective=objective,
                     corpus=corpus, vocab_size=vocab_size, seq_len=seq_len, steps=steps,
                     batch_size=batch_size, lr=lr, optimizer=optimizer, eval_every=eval_every, seed=seed,
                     warmup_steps=TrainConfig.default_warmup(steps) if warmup_steps is None else warmup_steps,
                     save_every=save_every)
    run_folder.check_arguments(arguments)
    dp = distributed.DataParallel(seed) if data_parallel else None
    if dp is not None and batch_size < dp.size:
        raise BadArgument("batch_size", f"must be at least the number of ranks ({dp.size}) "
                                     "in data-parallel training: every rank takes a share of the batch", batch_size)
    writes = dp is None or dp.rank == 0
    # the folder's lock is held from before its files are looked at until the run ends
    with run_folder.locked(out) if writes else contextlib.nullcontext():
        return _run_training(arguments, out, resume, progress, overwrite, dp, writes, warmup_steps)


def _run_training(arguments, out, resume, progress, overwrite, dp, writes, warmup_steps):
    """``run_training`` once its arguments are checked and its folder locked."""
    backend.keep_freed_memory()       # a run allocates the same arrays every step: keep their pages
    a = arguments
    task, steps, seed = a["task"], a["steps"], a["seed"]
    ckpt, tokenizer_path = os.path.join(out, "checkpoint.npz"), os.path.join(out, "tokenizer.json")
    tokenizer = None
    if resume:
        saved = run_folder.saved_run(out)
        if warmup_steps is None:
            arguments["warmup_steps"] = saved["arguments"]["warmup_steps"]
        conflicts = run_folder.resume_conflicts(saved, arguments)
        if conflicts:
            raise InvalidValue(f"cannot resume {out} with other settings: " + "; ".join(
                f"{name}={new!r} (the run has {old!r})" for name, new, old in conflicts))
        if task not in SEQ2SEQ_TASKS:
            V, size = saved["arguments"]["vocab_size"], safeio.regular_file(tokenizer_path)
            if size > run_folder.tokenizer_limit(V):
                raise InvalidValue(f"cannot resume: {tokenizer_path} is {size:,} bytes, more than the "
                                   f"{run_folder.tokenizer_limit(V):,} a tokenizer of {V:,} pieces can take")
            tokenizer = data.Tokenizer.load(tokenizer_path)
    elif not overwrite and run_folder.existing_run(out):
        found = run_folder.existing_run(out)
        advice = ("continue it with --resume (resume=True) or replace it with --overwrite (overwrite=True)"
                  if "checkpoint.npz" in found else "it stopped before its first checkpoint, so it cannot "
                  "be continued: replace it with --overwrite (overwrite=True)")
        raise FileExistsError(f"{out} already holds a run ({', '.join(found)}): {advice}")
    warmup = min(arguments["warmup_steps"], steps) if resume else arguments["warmup_steps"]  # resumed shorter
    train_config = TrainConfig(steps=steps, lr=a["lr"], optimizer=a["optimizer"], eval_every=a["eval_every"],
                               warmup_steps=warmup, progress=progress and writes)
    # everything is built in memory first, so that a refused argument leaves ``out`` untouched
    documents = None if task in SEQ2SEQ_TASKS else corpus_documents(a["corpus"])
    if tokenizer is None and task not in SEQ2SEQ_TASKS:
        tokenizer = load_tokenizer(documents, a["vocab_size"], progress=progress and writes)
    t, V = make_task(task, seed, a["batch_size"], a["seq_len"], a["objective"], a["corpus"], a["vocab_size"],
                     tokenizer=tokenizer, documents=documents)
    data_digest = run_folder.data_digest(task_data(task, t, documents))
    ms_random.manual_seed(seed)
    if resume:
        model, state = checkpoint.load(ckpt, with_training_state=True)
        identity = run_folder.identity(arguments, saved["model"],
                                       tokenizer_path if task not in SEQ2SEQ_TASKS else None,
                                       data_digest, backend.default_dtype.__name__)
        conflicts = run_folder.identity_conflicts(state.get("run"), identity)
        if conflicts:
            raise checkpoint.CheckpointError(f"{ckpt} belongs to another run than the one in {out}: "
                                             + run_state.describe(conflicts))
        if model.config.vocab_size != V:
            raise checkpoint.CheckpointError(f"{ckpt}: its vocabulary has {model.config.vocab_size} "
                                             f"tokens, the tokenizer of the run {V}")
        trainer = Trainer(model, t, train_config, data_parallel=dp)
        problems = run_state.problems(state, trainer, backend.default_dtype.__name__)
        if problems:
            raise checkpoint.CheckpointError(f"{ckpt}: its training state is not the run's: "
                                             + run_state.describe(problems))
        try:
            trainer.load_state_dict(state)
        except (KeyError, TypeError, ValueError, IndexError) as err:
            raise checkpoint.CheckpointError(f"{ckpt}: malformed training state "
                                             f"({type(err).__name__}: {err})") from None
    else:
        model = build_model(task, make_config(task, V, a["preset"], a["overrides"], a["seq_len"]))
        trainer = Trainer(model, t, train_config, data_parallel=dp)
    if dp is not None:
        dp.broadcast_parameters(model.parameters())

    identity = None
    if writes:
        run_folder.clear(out, run_files=not resume)
        if tokenizer is not None and not resume:
            tokenizer.save(tokenizer_path)
        settings = dict(task=task, preset=a["preset"], overrides=a["overrides"], objective=a["objective"],
                        corpus=a["corpus"], vocab_size=V, seq_len=a["seq_len"], steps=steps,
                        batch_size=a["batch_size"], lr=a["lr"], optimizer=a["optimizer"], seed=seed,
                        model=model.config.to_dict(), arguments=arguments, ranks=1 if dp is None else dp.size)
        with atomic_write(os.path.join(out, "config.json"), "w") as f:
            json.dump(settings, f, indent=1, default=str)
        identity = run_folder.identity(arguments, settings["model"],
                                       tokenizer_path if tokenizer is not None else None,
                                       data_digest, backend.default_dtype.__name__)
    history = _train_saving(model, trainer, out, arguments["save_every"], resumed=resume, writes=writes,
                            identity=identity)
    evals = [row for row in history if any(k.startswith("eval_") for k in row)]
    final = {k: v for k, v in (evals[-1] if evals else history[-1]).items()}
    return {"model": model, "trainer": trainer, "history": history, "final": final}


def _step_on_disk(path, saved):
    """The step of the checkpoint at ``path`` after a second signal: ``saved["step"]``, unless the
    signal cut a save short. The file is written whole and then renamed into place, so it is then
    the old one or the new one, and the file itself says which."""
    if saved.get("writing") in (None, saved["step"]):
        return saved["step"]
    try:
        return checkpoint.load(path, with_training_state=True)[1]["step"]
    except (OSError, checkpoint.CheckpointError):       # not renamed into place yet: none or the old
        return saved["step"]


def _train_saving(model, trainer, out, save_every, resumed, writes=True, identity=None):
    """Train, saving checkpoint and history every ``save_every`` steps, on a stop request and
    at the end; see run_training for what stops it. Each checkpoint records the run's
    ``identity`` (``run_folder.identity``). Data-parallel: only the rank that ``writes`` saves,
    and a stop request on any rank stops every rank after the same step."""
    ckpt, saved = os.path.join(out, "checkpoint.npz"), {"step": trainer.step if resumed else None}

    def save():
        if not writes or saved["step"] == trainer.step:
            return
        if not all(bool(backend.xp.isfinite(p.data).all()) for p in model.parameters()):
            raise FloatingPointError(f"training diverged: the weights are not finite after step {trainer.step}")
        saved["writing"] = trainer.step
        checkpoint.save(model, ckpt, {**trainer.state_dict(), "run": identity})
        saved["step"] = trainer.step
        save_history(trainer.history, os.path.join(out, "history.csv"))

    def after_step():
        if trainer.step % save_every == 0:
            save()

    # NumPy's overflow warnings would only repeat, in many lines, what the divergence error says
    dp = trainer.data_parallel
    signals = [s for s in STOP_SIGNALS if signal.getsignal(s) is not signal.SIG_IGN]
    with stop_requests(signals) as stop, numpy.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if dp is not None:
            dp.local_stop = lambda: bool(stop)
        stopping = (lambda: bool(stop)) if dp is None else (lambda: dp.stop_requested)
        try:
            trainer.train(stop=stopping, after_step=after_step)
            save()
        except FloatingPointError as err:
            if writes:
                save_history(trainer.history, os.path.join(out, "history.csv"))
            kept = (f"the last good checkpoint (step {saved['step']}) and the history are in {out}"
                    if saved["step"] is not None else f"no checkpoint was saved yet; the history is in {out}")
            raise TrainingDiverged(f"{err}; {kept}") from None
        except KeyboardInterrupt:       # a second signal: stopped at once, mid-step or mid-save
            saved["step"] = _step_on_disk(ckpt, saved)
            if saved["step"] is None:
                raise
            raise TrainingInterrupted(
                stop.signal or signal.SIGINT, saved["step"], out, f"interrupted at once by a second signal; the last "
                f"checkpoint (step {saved['step']}) is in {out}") from None
    if stopping():
        raise TrainingInterrupted(stop.signal or signal.SIGTERM, trainer.step, out)
    return trainer.history
