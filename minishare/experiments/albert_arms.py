"""ALBERT's sharing variants as seeded arms, shared by every experiment that trains the tiny
ALBERT (sharing variants, layer-wise, SOP/NSP, embedding size, tying, regularizer): the run
request and its readable name, one run per seed, their summary, and the no-model baselines of
the pre-training task. Equal requests get equal names, so a run two experiments need trains
once."""
import statistics

from minishare.analysis import count_parameters
from minishare.experiments import claims as ledger, stats
from minishare.experiments.runs import cached_run


VARIANTS = ("not-shared", "all-shared", "shared-attention", "shared-ffn")
METRICS = ("eval_mlm_loss", "eval_mlm_accuracy", "eval_sop_accuracy", "eval_nsp_accuracy", "eval_mlm_unigram_loss")
# How a field that differs from ``settings.albert`` shows in a run name.
_TAGS = {"embedding_size": "E", "hidden_size": "H", "num_hidden_layers": "N", "batch_size": "b"}


def albert_request(settings, sharing, objective="sop", seed=0, steps=None, recipe=None, **config):
    """The run_training arguments of one tiny ALBERT pre-training run; ``config``: AlbertConfig
    fields that differ from ``settings.albert``; ``steps``: other than ``settings.pretrain_steps``;
    ``recipe``: training arguments (``lr``, ``batch_size``) other than the ALBERT runs'."""
    return {**dict(task="pretrain", preset="albert-tiny", overrides={**settings.albert, "sharing": sharing, **config},
                   objective=objective, corpus=settings.pretrain_corpus, vocab_size=settings.vocab_size,
                   seq_len=settings.seq_len, steps=steps or settings.pretrain_steps, batch_size=settings.batch_size,
                   lr=settings.pretrain_lr, eval_every=settings.eval_every, seed=seed), **(recipe or {})}


def run_name(settings, sharing, objective="sop", seed=0, steps=None, recipe=None, **config):
    """A readable, unique name, e.g. "albert-all-shared-sop-E16-s0"; fields equal to
    ``settings.albert`` (and a recipe equal to the ALBERT runs') are left out, so equal requests
    get equal names."""
    tags = [] if steps in (None, settings.pretrain_steps) else [f"{steps}steps"]
    for field, value in sorted(config.items()):
        if settings.albert.get(field) == value:
            continue
        if field == "tie_word_embeddings":
            tags.append("tied" if value else "untied")
        else:
            tags.append(f"{_TAGS.get(field, field)}{value}")
    usual = {"lr": settings.pretrain_lr, "batch_size": settings.batch_size}
    for field, value in sorted((recipe or {}).items()):
        if usual.get(field) != value:
            tags.append(f"{_TAGS.get(field, field)}{value:g}")
    return "-".join(["albert", sharing, objective, *tags, f"s{seed}"])


def seed_requests(settings, sharing, objective="sop", steps=None, recipe=None, **config):
    """{run name: request} of one configuration, once per seed of ``settings.seeds``."""
    return {run_name(settings, sharing, objective, seed, steps, recipe, **config):
            albert_request(settings, sharing, objective, seed, steps, recipe, **config) for seed in settings.seeds}


def seed_runs(out, settings, sharing, objective="sop", progress=True, steps=None, recipe=None, **config):
    """The finished runs of one configuration, one per seed (trained here when missing)."""
    return [cached_run(out, name, progress, **request)
            for name, request in seed_requests(settings, sharing, objective, steps, recipe, **config).items()]


def summarize(runs, metrics=METRICS):
    """One configuration over seeds: parameters, every final metric as a ``stats.spread``, the
    median step time of each seed as a spread, and the histories (one per seed)."""
    finals = [r["final"] for r in runs]
    return {"params": count_parameters(runs[0]["model"]),
            "final": {m: stats.spread([f[m] for f in finals]) for m in metrics if all(m in f for f in finals)},
            "step_time": stats.spread([statistics.median(row["step_time"] for row in r["history"]) for r in runs]),
            "histories": [r["history"] for r in runs]}


def no_model_baselines(experiment, finals):
    """No model: the unigram distribution of the training tokens scored on the held-out masked
    tokens (``eval_mlm_unigram_loss`` of the runs' ``finals``, the same held-out set for every arm
    of a seed; its mean over seeds), and the majority label of SOP (balanced: half the pairs are
    swapped)."""
    out = [ledger.baseline(experiment, "eval_sop_accuracy", "majority label", 0.5)]
    unigram = [f["eval_mlm_unigram_loss"]["mean"] for f in finals if "eval_mlm_unigram_loss" in f]
    if unigram:
        out.insert(0, ledger.baseline(experiment, "eval_mlm_loss", "unigram", unigram[0]))
    return out
