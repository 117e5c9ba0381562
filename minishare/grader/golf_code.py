"""The competition's code track: a model of the student's own modules, under the same three budgets.

A code-track submission is ``entry.json`` with ``"model": {"code": "model.py", "vocab_size": V}``
(its recipe and precision as for any entry, ``golf.entry``) and ``model.py`` beside it, defining
``build(vocab_size, seq_len)``: a ``minishare.nn.Module`` whose call on token ids (B, T) gives
logits (B, T, V). Its code has to run, so it runs where the exercises' code runs: in the sandbox's
worker (``sandbox``: another user, Landlock, the audit hook, limits), through the probes of
``golf_probes``, which send back data only. Everything that decides the row happens here:

1. **Bytes**: the source of ``model.py`` (its bytes as uploaded: code can hold numbers too) plus
   the distinct parameters the model reports, each counted at the declared precision
   (``golf.budget``). Over the budget, the entry is refused before any training.
2. **Compute**: the training worker runs under the kernel's limit on CPU time (every thread's), the
   budget plus ``STARTUP_CPU`` for its imports; the probe stops training between steps at the
   budget, and a worker that outruns the kernel's limit is killed and not scored. The row's
   training seconds are the worker's CPU time as the kernel reports it to this process
   (``RUSAGE_CHILDREN``), imports included, not what the worker says.
3. **Data**: the worker gets the training split's token stream and nothing else, and the
   library's corpora, the competition's own code and the grader are tripwired there (``FORBID``),
   so the submission cannot draw text of its own from them. The grammar stories are drawn with the
   grader's seed (``draw``; a Gradescope zip's own), so a copy of the public corpus's code does not
   hold the test stories either. Natural text is public, so the code track runs on grammar only.
4. **Storage and score**: the returned weights are checked against the reported shapes and
   replaced by their stored form (``quantize.read_back``) here; a fresh worker loads those copies.
   Bits per byte are then computed here from the worker's log-probabilities, against targets that
   never leave this process (``rounds_bits_per_byte``).

Why rounds: the worker may run any code on what it is given, so it must never be given a token
it is asked to predict. The held-out stream is scored in the windows ``golf.score`` lays out (a
window's context starts afresh, as for declared entries), one position at a time: round t sends
the first t tokens of every window and asks for the next one's distribution. Within a round the
windows are split into two requests at random, and ``CHECK_ROUNDS`` rounds are asked again with
another split: a model whose prediction for a window depends on the other windows it was sent with
(one that reads ahead in the stream through the window after it) is refused. A request is one
worker, so a model's ``seq_len`` costs about 2 · seq_len worker starts (about a second each).
"""
import math
import os
import resource
import signal

import numpy as np

from minishare.errors import InvalidValue
from minishare.golf import budget, quantize, run as golf_run, score
from minishare.golf.entry import CODE_FILE
from minishare.grader.cases import rebuild
from minishare.grader.sandbox import Sandbox

CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golf_probes.py")
# What a submission may not call or import: the text's sources, the competition and the grader.
FORBID = ("minishare.data", "minishare.run", "minishare.golf", "minishare.analysis", "minishare.experiments",
          "minishare.grader")
STARTUP_CPU = 30.0          # CPU seconds a worker may spend importing NumPy, the library and model.py
PREDICT_CPU = 60.0          # CPU seconds of one prediction request
CHECK_ROUNDS = 4            # rounds asked again with another split of the windows
# The CPU limit is the kernel's; the wall-clock one only catches a worker that waits without
# computing, so it is looser by this factor: a loaded machine gives a worker less than a core.
WALL = 3
TOLERANCE = 1e-3            # nats: float32 log-probabilities of one window in two batches agree far closer


def grade(entry, submission, split, corpus="grammar", draw=0, budget_bytes=golf_run.BUDGET_BYTES,
          cpu_seconds=golf_run.CPU_SECONDS, box=None, allow_root=False):
    """The leaderboard row of the code-track ``entry`` whose folder is ``submission`` (the keys of
    ``golf.run.grade``'s), or ``InvalidValue`` naming why it is refused. ``box``: a ``Sandbox`` to
    run in (default: one of its own, ``allow_root`` as ``Sandbox``'s)."""
    if corpus != "grammar":
        raise InvalidValue("the code track runs on the grammar corpus only: natural text is the library's own "
                           "documentation, which a submission's code could read")
    source = read_source(submission, budget_bytes)
    parts, tokenizer = golf_run.prepare(entry, corpus, draw)
    V, r = tokenizer.vocab_size, entry.recipe
    common = {"vocab_size": V, "seq_len": r["seq_len"], "seed": r["seed"]}
    own = box is None
    box = Sandbox(allow_root=allow_root) if own else box
    try:
        run = _runner(box, source)
        shapes = [tuple(s) for s in run("golf_shapes", common, 60.0)["shapes"]]
        n_bytes = len(source) + sum(budget.tensor_bytes(s, entry.precision) for s in shapes)
        if n_bytes > budget_bytes:
            raise InvalidValue(f"entry {entry.name!r} stores {n_bytes:,} bytes at {entry.precision} ({len(source):,} of "
                               f"them {CODE_FILE}'s source), over the budget of {budget_bytes:,} bytes; refused "
                               "before training")
        # the LM task's stream (each document, then [SEP]): the held-out stream without its first [SEP]
        train_ids = score.held_out_stream(parts["train"], tokenizer)[0][1:]
        config = entry.train_config()
        given = {**common, "train_ids": train_ids.astype("<u2").tobytes(), "batch_size": r["batch_size"],
                 "cpu_seconds": cpu_seconds,
                 "train": {k: getattr(config, k) for k in ("steps", "lr", "optimizer", "weight_decay", "warmup_steps",
                                                           "schedule", "max_grad_norm", "eval_every", "progress")}}
        before = _children_cpu()
        trained = run("golf_train", given, WALL * (cpu_seconds + STARTUP_CPU), cpu=cpu_seconds + STARTUP_CPU)
        used = _children_cpu() - before
        if len(trained["arrays"]) != len(shapes):
            raise InvalidValue(f"the trained model has {len(trained['arrays'])} distinct parameters, "
                               f"not the {len(shapes)} it reported before training")
        stored = [stored_form(a, s, entry.precision, i) for i, (a, s) in enumerate(zip(trained["arrays"], shapes))]
        weights = {**common, "shapes": [list(s) for s in shapes],
                   "arrays": [np.ascontiguousarray(a, dtype="<f4").tobytes() for a in stored]}

        def predict(contexts):
            out = run("golf_predict", {**weights, "contexts": contexts}, WALL * (PREDICT_CPU + STARTUP_CPU),
                      cpu=PREDICT_CPU + STARTUP_CPU)["log_p"]
            log_p = np.frombuffer(out, dtype="<f4").astype(np.float64)
            if log_p.size != len(contexts) * V:
                raise InvalidValue(f"the model gave {log_p.size} log-probabilities for {len(contexts)} contexts "
                                   f"of V = {V}")
            return log_p.reshape(len(contexts), V)
        result = rounds_bits_per_byte(predict, parts[split], tokenizer, r["seq_len"],
                                      np.random.default_rng([draw, r["seed"]]))
    finally:
        if own:
            box.close()
    return {"name": entry.name, "split": split, "bits_per_byte": result["bits_per_byte"], "bytes": n_bytes,
            "budget_bytes": budget_bytes, "train_cpu_seconds": used, "cpu_seconds_limit": cpu_seconds,
            "steps_done": trained["steps_done"], "steps": r["steps"], "stopped_at_limit": trained["stopped_at_limit"],
            "precision": entry.precision, "seed": r["seed"], "test_iterations": None, "vocab_size": V,
            "train_documents": len(parts["train"]), "scored_tokens": result["tokens"],
            "scored_bytes": result["bytes"], "source_bytes": len(source)}


def read_source(submission, budget_bytes):
    """The bytes of the submission's ``model.py`` (beside its ``entry.json``, found as Gradescope
    unpacks an upload): a regular file, not larger than the whole budget."""
    found = [os.path.join(d, CODE_FILE) for d, _, names in os.walk(submission) if CODE_FILE in names]
    if len(found) != 1:
        raise InvalidValue(f"a code-track entry needs exactly one {CODE_FILE} beside its entry.json; found {len(found)}")
    if os.path.islink(found[0]) or not os.path.isfile(found[0]):
        raise InvalidValue(f"{CODE_FILE} must be a regular file, not a link")
    if os.path.getsize(found[0]) > budget_bytes:
        raise InvalidValue(f"{CODE_FILE} is {os.path.getsize(found[0]):,} bytes, over the whole budget of "
                           f"{budget_bytes:,} bytes")
    with open(found[0], "rb") as f:
        return f.read()


def stored_form(data, shape, precision, index):
    """The returned float32 bytes of parameter ``index`` as its stored form at ``precision`` reads back."""
    values = np.frombuffer(data, dtype="<f4") if isinstance(data, bytes) else np.zeros(0, np.float32)
    if values.size != math.prod(shape):
        raise InvalidValue(f"trained parameter {index} has {values.size} values, not the {math.prod(shape)} of "
                           f"its shape {shape} reported before training")
    stored = quantize.read_back(values.reshape(shape).astype(np.float64), precision)
    if not np.isfinite(stored).all():
        raise InvalidValue(f"trained parameter {index} is not finite at {precision} (training diverged?)")
    return stored


def rounds_bits_per_byte(predict, documents, tokenizer, seq_len, rng, check_rounds=CHECK_ROUNDS):
    """``golf.score.bits_per_byte``'s numbers, from ``predict(contexts (B, t)) -> log p (B, V)``
    asked one position at a time (see the module's docstring): {"bits_per_byte", "nats", "tokens",
    "bytes"}. ``rng`` splits the windows; a model whose predictions change with the split is refused."""
    ids, text = score.held_out_stream(documents, tokenizer)
    pairs = score.windows(ids, seq_len)
    checked = set(rng.choice(seq_len, size=min(check_rounds, seq_len), replace=False).tolist())
    total = 0.0
    for t in range(1, seq_len + 1):
        rows = [w for w, (x, _) in enumerate(pairs) if len(x) >= t]
        log_p = _asked(predict, pairs, rows, t, rng)
        if t - 1 in checked:
            again = _asked(predict, pairs, rows, t, rng)
            worst = max(float(np.abs(log_p[w] - again[w]).max()) for w in rows)
            if not worst <= TOLERANCE:
                raise InvalidValue(f"the model's next-token log-probabilities for a window changed by {worst:.3g} "
                                   "nats when it was asked again with other windows beside it: a prediction may "
                                   "use its own window's context only, and must be deterministic; not scored")
        for w in rows:
            lp = log_p[w]
            total -= float(lp[pairs[w][1][t - 1]] - np.logaddexp.reduce(lp))     # renormalized here
    n_bytes = len(text.encode("utf-8"))
    return {"bits_per_byte": total / (math.log(2) * n_bytes), "nats": total, "tokens": len(ids) - 1,
            "bytes": n_bytes}


def _asked(predict, pairs, rows, t, rng):
    """{window: log p (V,)} for position t of ``rows``, asked in two requests of a random split."""
    order = rng.permutation(rows).tolist()
    half, out = (len(order) + 1) // 2, {}
    for part in (order[:half], order[half:]):
        if part:
            log_p = predict(np.stack([pairs[w][0][:t] for w in part]))
            if not np.isfinite(log_p).all():
                raise InvalidValue(f"the model gave a log-probability that is not finite at position {t}; not scored")
            out.update(zip(part, log_p))
    return out


def _runner(box, source):
    """``run(probe, given, seconds, cpu=None)``: the probe's data, or ``InvalidValue`` with its error."""
    forbid = {name: [] for name in FORBID}

    def run(name, given, seconds, cpu=None):
        result = box.run({CODE_FILE: source}, CASES, [name], ["model"], forbid, list(FORBID), {name: seconds},
                         {name: given}, cpu_seconds=cpu)
        record = result.records.get(name, {})
        breaches = result.breaches + record.get("breaches", [])
        if breaches:
            raise InvalidValue(f"{CODE_FILE} used what the competition forbids: {breaches[0]}")
        if "error" in record:
            if cpu is not None and any(f"exit status -{n}" in record["error"] for n in (signal.SIGXCPU, signal.SIGKILL)):
                raise InvalidValue(f"{name.replace('golf_', '')}: the worker passed the kernel's limit of {cpu:g} "
                                   "CPU seconds and was killed; not scored")
            raise InvalidValue(f"{name.replace('golf_', '')}: {record['error']}")
        return rebuild(record["data"])
    return run


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
