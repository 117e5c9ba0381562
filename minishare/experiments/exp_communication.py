"""Experiment "communication": what data-parallel training sends per step, for ALBERT's four
variants. ALBERT argues that fewer parameters mean less communication (Lan et al., 2019, Sec. 1)
and shows no numbers; here they are.

Counted: the bytes of one step's Allreduce (``minishare.distributed``: one float32 gradient per
*distinct* parameter of ``AlbertForPreTraining``, a shared tensor once) at the ALBERT-base shape,
built shape-only (nothing allocated), and the bytes each rank sends in a ring Allreduce of that
buffer, 2 (K - 1) / K of it, for K = 2 to 16 ranks.

Timed: a training step on 2 ranks (``mpiexec -n 2``, started by this experiment) at a small shape,
split into compute (forward and backward of the rank's half of the batch) and Allreduce (after a
barrier, so a rank's wait for the slower one is not counted as communication), one step of every
variant in turn for several rounds. Sharing should shrink the Allreduce with the distinct
parameters and leave the compute alone; the claims pair the variants by round.

The timed part needs mpi4py and ``mpiexec`` (``pip install mpi4py mpich``); without them the result
holds the counts and says why the timing is missing.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from minishare.experiments import book_cells as cells, claims as ledger, stats

NAME = "communication"
TITLE = "Communication: what data-parallel training sends per step"
ORDER = 130
READS = ("vocab_size",)

VARIANTS = ("not-shared", "shared-attention", "shared-ffn", "all-shared")
RANKS = (2, 4, 8, 16)
BYTES_PER_NUMBER = 4                      # float32 gradients
# The timed step: albert-tiny (H = 128, E = 32, FFN 512) at N positions, a global batch of B x T
# random tokens split over 2 ranks. Full: N = 12, ALBERT-base's depth, so the variants' ratios of
# distinct parameters are near ALBERT-base's; 15 rounds, one step of each variant per round.
TIMING = {True: dict(num_hidden_layers=4, batch=(8, 32), rounds=3),
          False: dict(num_hidden_layers=12, batch=(16, 64), rounds=15)}
TIMED_RANKS = 2


def counted(preset="albert-base", vocab_size=None):
    """{variant: {"parameters", "tensors", "bytes"}} of the pre-training model at ``preset``'s
    shape, each distinct tensor once, built shape-only."""
    from minishare.models import AlbertConfig, AlbertForPreTraining
    from minishare.nn import init
    rows = {}
    for name in VARIANTS:
        fields = {} if vocab_size is None else {"vocab_size": vocab_size}
        with init.shape_only():
            model = AlbertForPreTraining(AlbertConfig.from_preset(preset, sharing=name, **fields))
        params = list(model.parameters())
        n = sum(p.size for p in params)
        rows[name] = {"parameters": n, "tensors": len(params), "bytes": BYTES_PER_NUMBER * n}
    return rows


def ring_bytes(nbytes, K):
    """Bytes each of K ranks sends in a ring Allreduce of ``nbytes``: a reduce-scatter and an
    all-gather, each K - 1 chunks of nbytes / K."""
    return 2 * (K - 1) / K * nbytes


def run(out, settings, progress=True):
    base = counted()
    timing = TIMING[settings.quick]
    result = {"preset": "albert-base", "counted": base, "ranks": list(RANKS),
              "ring_bytes": {name: {str(K): ring_bytes(r["bytes"], K) for K in RANKS} for name, r in base.items()},
              "timing_model": {"preset": "albert-tiny", "vocab_size": settings.vocab_size,
                               "num_hidden_layers": timing["num_hidden_layers"], "batch": list(timing["batch"]),
                               "ranks": TIMED_RANKS, "rounds": timing["rounds"]}}
    missing = _missing_mpi()
    if missing:
        result["timed"], result["timed_missing"] = None, missing
        return result
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "timed.json")
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
               "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
        if progress:
            print(f"[communication] timing {timing['rounds']} rounds on {TIMED_RANKS} ranks (mpiexec)", flush=True)
        done = subprocess.run(["mpiexec", "-n", str(TIMED_RANKS), sys.executable, "-m", __name__, path,
                               json.dumps({**result["timing_model"]})], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"the timed step on {TIMED_RANKS} ranks failed (mpiexec status "
                               f"{done.returncode}): {done.stderr.strip()[-1500:]}")
        with open(path) as f:
            result["timed"] = json.load(f)
    return result


def _missing_mpi():
    """Why the timed part cannot run here, or None."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py is not installed (pip install mpi4py mpich)"
    if shutil.which("mpiexec") is None:
        return "no mpiexec on the PATH (pip install mpich)"
    return None


# --- the timed step, on every rank (python -m minishare.experiments.exp_communication OUT JSON) ------
def _rank_main(path, shape):
    import numpy

    from minishare import distributed, optim, random as ms_random
    from minishare.models import AlbertConfig, AlbertForPreTraining

    dp = distributed.DataParallel()
    comm = dp.comm
    B, T = shape["batch"]
    rng = numpy.random.default_rng(0)                     # the same global batch on every rank
    ids = rng.integers(5, shape["vocab_size"], (B, T))
    batch = dict(input_ids=ids, attention_mask=numpy.ones((B, T), dtype=numpy.int64),
                 token_type_ids=numpy.zeros((B, T), dtype=numpy.int64),
                 labels=numpy.where(rng.random((B, T)) < 0.15, ids, -100),
                 sentence_order_label=rng.integers(0, 2, B))
    part = distributed.shard(batch, dp.size, dp.rank)
    setups = {}
    for name in VARIANTS:
        ms_random.manual_seed(0)
        config = AlbertConfig.from_preset(shape["preset"], vocab_size=shape["vocab_size"], sharing=name,
                                          num_hidden_layers=shape["num_hidden_layers"])
        model = AlbertForPreTraining(config)
        setups[name] = (model, optim.AdamW(model.parameters(), lr=1e-4))

    def step(model, optimizer):
        comm.Barrier()
        wall, cpu = time.perf_counter(), time.process_time()
        loss = model(**part).loss
        loss.backward()
        compute = (time.perf_counter() - wall, time.process_time() - cpu)
        comm.Barrier()                                    # the Allreduce's time alone, not the wait
        wall = time.perf_counter()
        dp.all_reduce(model.parameters(), [loss])
        allreduce = time.perf_counter() - wall
        optimizer.step()
        optimizer.zero_grad()
        return compute, allreduce

    sizes = {}
    for name, (model, optimizer) in setups.items():      # warm-up, and the buffer each step sends
        model(**part).loss.backward()
        sizes[name] = int(distributed.flatten_gradients(model.parameters(), [0.0, 0.0])[0].nbytes)
        optimizer.zero_grad()
        step(model, optimizer)
    times = {name: {"compute_wall": [], "compute_cpu": [], "allreduce_wall": []} for name in VARIANTS}
    for r in range(shape["rounds"]):
        for name in (VARIANTS if r % 2 == 0 else VARIANTS[::-1]):
            (wall, cpu), allreduce = step(*setups[name])
            # a step waits for the slower rank: keep the largest of the ranks' times
            for key, value in (("compute_wall", wall), ("compute_cpu", cpu), ("allreduce_wall", allreduce)):
                times[name][key].append(comm.allreduce(value, op=distributed.mpi().MAX))
    if dp.rank == 0:
        params = {name: sum(p.size for p in model.parameters()) for name, (model, _) in setups.items()}
        with open(path, "w") as f:
            json.dump({"times": times, "buffer_bytes": sizes, "parameters": params}, f)


# --- figure, report -----------------------------------------------------------------------------------
def _spread(result, name, key):
    return stats.spread(result["timed"]["times"][name][key])


def figures(result, folder):
    from minishare.analysis import communication_figure
    from minishare.analysis.figure_style import save_figure
    fig = communication_figure.plot_communication(result["counted"], result["ring_bytes"], result.get("timed"),
                                                  title_shape=_timed_shape(result))
    return [(f"Bytes each rank sends per step (ring Allreduce of the float32 gradients, ALBERT-base shape) "
             f"and, on {TIMED_RANKS} ranks at a small shape, a step's compute against its Allreduce "
             "(median, bars min–max over rounds)",
             save_figure(fig, f"{folder}/communication"))]


def _timed_shape(result):
    m = result["timing_model"]
    return (f"albert-tiny shape, N = {m['num_hidden_layers']}, global batch {m['batch'][0]} × {m['batch'][1]}, "
            f"{m['ranks']} ranks")


def _mb(n):
    return f"{n / 1e6:,.1f}"


def report(result, figs):
    c, ring, Ks = result["counted"], result["ring_bytes"], result["ranks"]
    ns = c["not-shared"]["bytes"]
    lines = ["What one data-parallel step sends: the float32 gradient of every distinct parameter of "
             "ALBERT-base's pre-training model (V = 30,000, E = 128, H = 768, N = 12, MLM and SOP heads; "
             "a shared tensor once), counted shape-only. The buffer adds one flag per tensor and the "
             "step's losses (a few dozen numbers). Each rank of a ring Allreduce sends 2 (K − 1) / K of "
             "the buffer; MB = 10^6 bytes.", "",
             "| variant | distinct parameters | tensors | gradient MB | vs not-shared | "
             + " | ".join(f"MB sent per rank, K = {K}" for K in Ks) + " |",
             "|---" * (5 + len(Ks)) + "|"]
    for name in VARIANTS:
        r = c[name]
        lines.append(f"| {name} | {r['parameters']:,} | {r['tensors']} | {_mb(r['bytes'])} | "
                     f"{r['bytes'] / ns:.3f} | " + " | ".join(_mb(ring[name][str(K)]) for K in Ks) + " |")
    lines += [""]
    if result.get("timed") is None:
        lines.append(f"The timed step did not run: {result.get('timed_missing', 'no timing in this result')}.")
        return "\n".join(lines)
    t, m = result["timed"], result["timing_model"]
    lines += [f"A training step timed on {m['ranks']} ranks ({_timed_shape(result)}), {m['rounds']} rounds "
              "(one step of each variant per round, the order reversed every other round): seconds per "
              "step as mean ± std (min–max) over the rounds, and the ratio of the medians. Compute: "
              "forward and backward of the rank's share (wall clock; the larger of the two ranks). "
              "Allreduce: packing, sending and unpacking the buffer, timed after a barrier.", "",
              "| variant | buffer bytes | compute s | Allreduce s | Allreduce / compute (medians) |",
              "|---|---|---|---|---|"]
    for name in VARIANTS:
        comp, comm = _spread(result, name, "compute_wall"), _spread(result, name, "allreduce_wall")
        lines.append(f"| {name} | {t['buffer_bytes'][name]:,} | {stats.fmt(comp, 4)} | {stats.fmt(comm, 5)} | "
                     f"{statistics.median(t['times'][name]['allreduce_wall']) / statistics.median(t['times'][name]['compute_wall']):.3f} |")
    return "\n".join(lines)


def observations(result):
    """Facts: the counted bytes (no spread), the counted FLOPs of the timed models and the share of
    a step the Allreduce takes. The timed variants against each other are claims (``claims``)."""
    c = result["counted"]
    ns, sh = c["not-shared"]["bytes"], c["all-shared"]["bytes"]
    notes = [f"At the ALBERT-base shape all-shared sends {ns / sh:.1f}× fewer bytes per step than not-shared "
             f"({_mb(sh)} against {_mb(ns)} MB of gradients; counted, so no spread); shared-attention "
             f"{c['shared-attention']['bytes'] / ns:.2f}× and shared-FFN {c['shared-ffn']['bytes'] / ns:.2f}× "
             "the not-shared bytes."]
    if result.get("timed") is None:
        return notes
    t = result["timed"]
    fewer = t["buffer_bytes"]["not-shared"] / t["buffer_bytes"]["all-shared"]
    notes.append(f"The timed all-shared model counts {_flops_ratio(result):.2f}× the forward FLOPs per token of "
                 f"the not-shared one and sends {fewer:.1f}× fewer bytes (counted).")
    share = {v: statistics.median(t["times"][v]["allreduce_wall"]) /
             (statistics.median(t["times"][v]["allreduce_wall"]) + statistics.median(t["times"][v]["compute_wall"]))
             for v in ("not-shared", "all-shared")}
    notes.append(f"On one machine (shared memory, no network) the Allreduce is {100 * share['not-shared']:.1f}% of a "
                 f"not-shared step and {100 * share['all-shared']:.1f}% of an all-shared one (medians); across "
                 "machines the same bytes cross a network, far slower than memory.")
    return notes


def claims(result, seeds):
    """The timed variants against not-shared, paired by round (a round times one step of every
    variant in turn, so a slow spell of the machine hits all of them): the Allreduce of all-shared
    (primary: ALBERT's argument, fewer parameters, less communication), of shared-attention and of
    shared-FFN, and the compute of all-shared (the same FLOPs: no difference expected). ``seeds``
    does not enter: the timing has rounds, not seeds. None without a timing."""
    if result.get("timed") is None:
        return []
    times, rounds = result["timed"]["times"], list(range(result["timing_model"]["rounds"]))
    shape = _timed_shape(result)

    def timed(variant, key, what, primary=False):
        return ledger.compare(
            f"communication.{key}.{variant}_vs_not-shared", "communication", f"{what} {shape}", f"{key}_s",
            "lower", variant, "not-shared", rounds, times[variant][key], times["not-shared"][key],
            "fewer parameters mean less communication (Lan et al., 2019, Sec. 1; no numbers)" if key ==
            "allreduce_wall" else None, primary, digits=5, unit=" s", over="rounds")
    return [timed("all-shared", "allreduce_wall", "Allreduce seconds per step,", primary=True),
            timed("shared-attention", "allreduce_wall", "Allreduce seconds per step,"),
            timed("shared-ffn", "allreduce_wall", "Allreduce seconds per step,"),
            timed("all-shared", "compute_wall", "Compute seconds per step, forward and backward,")]


def _flops_ratio(result):
    """Counted forward FLOPs per token of the timed all-shared model over the not-shared one."""
    from minishare.analysis import flops
    from minishare.models import AlbertConfig
    m = result["timing_model"]
    configs = [AlbertConfig.from_preset(m["preset"], vocab_size=m["vocab_size"], sharing=s,
                                        num_hidden_layers=m["num_hidden_layers"]) for s in ("all-shared", "not-shared")]
    T = m["batch"][1]
    return flops.flops_per_token(configs[0], T) / flops.flops_per_token(configs[1], T)


if __name__ == "__main__":
    _rank_main(sys.argv[1], json.loads(sys.argv[2]))


# --- the book's table ---------------------------------------------------------------------------------
BOOK_TABLES = ("communication",)


def book_tables(result, settings, said):
    """Chapter 12's tables: the bytes counted at ALBERT-base's shape and the step timed on 2 ranks."""
    return {"communication": _book_table(result, settings)}


def _book_table(result, settings):
    """The Allreduce bytes of ALBERT's four variants at the ALBERT-base shape (counted) and the
    step timed on 2 ranks (compute against Allreduce, over rounds)."""
    counted, ring = result.get("counted", {}), result.get("ring_bytes", {})
    Ks = result.get("ranks", [])
    mb = lambda n: f"{n / 1e6:,.1f}"
    rows = [(name, cells.cell(lambda r=r: f"{cells.get(r, 'parameters'):,}"), cells.cell(lambda r=r: mb(cells.get(r, "bytes"))),
             cells.cell(lambda r=r: f"{cells.get(r, 'bytes') / cells.get(counted, 'not-shared', 'bytes'):.3f}"),
             *[cells.cell(lambda name=name, K=K: mb(cells.get(ring, name, str(K)))) for K in Ks])
            for name, r in counted.items()]
    text = cells.markdown_table(("variant", "distinct parameters", "gradient MB per step", "vs not-shared",
                           *[f"MB sent per rank, K = {K}" for K in Ks]), rows)
    text += ("\n\nCounted at the ALBERT-base shape (V = 30,000, E = 128, H = 768, N = 12) for the "
             "pre-training model with its heads, each distinct tensor once, float32; a ring Allreduce "
             "sends 2 (K − 1) / K of the buffer from each rank. MB = 10^6 bytes.\n")
    timed = result.get("timed")
    if not timed:
        why = result.get("timed_missing", "no timing in this result")
        return text + f"\nThe timed step is not in this run: {why}.\n\n" + cells.source_line("communication", {**settings, "seeds": None}) + "\n"
    model = result.get("timing_model", {})
    times = timed.get("times", {})
    rows = [(name, cells.cell(lambda name=name: f"{cells.get(timed, 'buffer_bytes', name):,}"),
             cells.cell(lambda name=name: cells.num(stats.spread(cells.get(times, name, "compute_wall")), 4)),
             cells.cell(lambda name=name: cells.num(stats.spread(cells.get(times, name, "allreduce_wall")), 5)))
            for name in times]
    text += ("\n" + cells.markdown_table(("variant", "buffer bytes", "compute s per step", "Allreduce s per step"), rows)
             + f"\n\nTimed on {model.get('ranks', '?')} ranks of one machine (albert-tiny shape, N = "
             f"{model.get('num_hidden_layers', '?')}, global batch {' × '.join(map(str, model.get('batch', [])))}), "
             f"{model.get('rounds', '?')} rounds, one step of each variant per round: mean ± std (min–max) "
             "over the rounds. Compute: forward and backward of a rank's share; Allreduce: after a barrier, "
             "so the wait for the slower rank is not in it.\n\n" + cells.source_line("communication", {**settings, "seeds": None}) + "\n")
    return text
