"""A single training run on disk, the run behind ``python -m minishare train``: beside
``minishare.train`` (the training loop), this adds what a run needs around the loop.

    from minishare.run import run_training
    result = run_training(task="copy", steps=200, out="runs/copy")    # resumable: resume=True

One concept a module:

* ``build``: the corpus, tokenizer, task and model of a run, by name (``make_task``, ...), and
  the run's own defaults (``RunDefaults``);
* ``folder``: the run folder: its files, its lock, the checks of a new or resumed run, the
  identity its checkpoint records;
* ``training``: ``run_training``: check, lock, build, train, save every ``save_every`` steps;
* ``errors``: how a run ends on purpose (``BadArgument``, ``RunInUse``, ``TrainingInterrupted``,
  ``TrainingDiverged``).

Not imported by ``import minishare``; the experiments (``minishare.experiments``) build on it.
"""
from minishare.run.build import RunDefaults
from minishare.run.errors import BadArgument, RunInUse, TrainingDiverged, TrainingInterrupted
from minishare.run.training import run_training

__all__ = ["run_training", "RunDefaults", "BadArgument", "RunInUse", "TrainingDiverged",
           "TrainingInterrupted"]
