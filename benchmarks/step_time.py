"""Time one ALBERT pre-training step in minishare and in PyTorch eager, on the same model and batch,
and measure each one's peak memory.

    python benchmarks/step_time.py --threads 1          # the tiny and base shapes below, all-shared, CPU
    python benchmarks/step_time.py --threads 1 --shapes course --mlm all --steps 30
    python benchmarks/step_time.py --threads 2 --shapes small,base --no-memory
    python benchmarks/step_time.py --shapes tiny --variants all-shared,not-shared --steps 20
    python benchmarks/step_time.py --preset albert-base --vocab-size 30000 --batch-size 8 --seq-len 128
    python benchmarks/step_time.py --profile            # also: where minishare's step spends its time

Shapes: ``tiny`` is albert-tiny with V = 2000 on a batch of 16 x 64 tokens; ``base`` is ALBERT-base
(V = 30,000, E = 128, H = 768, N = 12) on 8 x 128 tokens; ``course`` is the model the course's
experiments train (``minishare.experiments.settings.FULL``: V = 1,000, E = 32, H = 64, N = 4, 2
heads, FFN 256) on their batch of 32 x 64 tokens; ``small`` is the "tiny" of issue 31 (V = 8,000, E = 128,
H = 256, N = 4, 4 heads, FFN 1,024) on 16 x 128 tokens. ``--preset`` with ``--vocab-size``,
``--batch-size`` and ``--seq-len`` times one shape of your choice instead.

A step is what training repeats: forward (embeddings, N encoder positions, MLM head tied to the word
embeddings, SOP head, both losses), backward, and an AdamW update. Three steps are timed:

* minishare, as ``minishare train`` runs it: the MLM head only at the masked positions
  (``mlm_positions``), as ALBERT's reference code does; with ``--mlm all``, at every position
  instead, the algorithm of the next one, so that their ratio compares the implementations alone
  (at the small course shape the overhead around the arithmetic is most of the difference);
* PyTorch as Hugging Face's ``AlbertForPreTraining`` is written, what its users run: the MLM head
  at all B x T positions, the loss over the labelled ones;
* PyTorch with the same gather as minishare: the same algorithm, so the two ratios show how much
  of a difference is the algorithm and how much the implementation.

All run float32 on the same kind of device: on the CPU with the same number of BLAS threads, or,
with ``MINISHARE_BACKEND=cupy``, minishare on CuPy against PyTorch on CUDA (never a GPU against a
CPU); on a GPU the clock is read only after every framework has finished its queued kernels. They
run one after the other in this process (their steps are interleaved, so a busy machine slows all
alike), starting from the same weights: the first losses must agree, which checks that the PyTorch
model below is the same network. Reported: the median over ``--steps`` steps after ``--warmup``,
and the ratios minishare / PyTorch. Absolute times depend on the machine; the ratio is what to
compare (DEVELOPERS.md: speed is measured as ratios).

Peak memory (CPU only): each framework's step runs again in a fresh process of its own. That process
reads its resident memory after its imports, builds the model, optimizer and batch, takes one step
(so the optimizer's state exists and the allocators are warm), resets the kernel's high-water mark
of resident memory (``/proc/self/clear_refs``), takes two more steps and reads the mark
(``VmHWM``). Reported: the mark minus the memory after the imports, i.e. what the step's weights,
gradients, optimizer state, activations and the allocator's slack occupied at their highest,
measured by the kernel in the same way for both frameworks.

Each framework's minor page faults per step are printed too: a fault is a fresh page the kernel
had to zero. The C library's allocator is shared by the process, and this script, as a training
run does, tells glibc to keep freed memory (``minishare.backend.keep_freed_memory``), so PyTorch's
steps here are
spared most of theirs as well (at the course shape, Hugging Face style: 7,000 per step here before
minishare kept freed memory, 0 to 2,300 after). Before it, minishare's step in a process of its
own (``minishare train``) took 11,000 per step at the course shape, and fewer in this script, whose
PyTorch steps had moved glibc's thresholds: compare CPU times of processes of one framework each
for what a training run gains (``--clock cpu`` helps on a busy machine).

The floor and the profile (``step_anatomy.py``; ``--no-anatomy`` skips them): the time of the
matrix products of minishare's step alone, replayed back to back with the same shapes, layouts and
threads, and the step's time over it; then minishare's step split by kind of work (matrix
products, elementwise passes, reductions, indexing and shape, graph and Python bookkeeping, the
optimizer). ``MINISHARE_OPS=reference`` times the reference forms of the ops instead of the fast
ones (``minishare.backend.use_reference_ops``).

Variants: ``all-shared`` (ALBERT: one attention and one FFN set serve every position) and
``not-shared`` (BERT-style: one set per position). Sharing changes the parameter count and the
optimizer's work, not the forward and backward computation.
"""
import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time

SHAPES = {"tiny": dict(preset="albert-tiny", vocab_size=2000, batch_size=16, seq_len=64),
          "base": dict(preset="albert-base", vocab_size=30000, batch_size=8, seq_len=128),
          "course": dict(preset="albert-tiny", vocab_size=1000, batch_size=32, seq_len=64,
                         overrides=dict(hidden_size=64, embedding_size=32, num_attention_heads=2,
                                        intermediate_size=256, num_hidden_layers=4)),
          "small": dict(preset="albert-tiny", vocab_size=8000, batch_size=16, seq_len=128,
                        overrides=dict(hidden_size=256, embedding_size=128, num_attention_heads=4,
                                       intermediate_size=1024, num_hidden_layers=4))}
FRAMEWORKS = ("minishare", "torch-hf", "torch-gather")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", default="tiny,base", help=f"comma-separated: {', '.join(SHAPES)}")
    parser.add_argument("--preset", help="time one shape of your own instead of --shapes: a preset ...")
    parser.add_argument("--vocab-size", type=int, default=2000, help="... with this V ...")
    parser.add_argument("--batch-size", type=int, default=16, help="... on batches of B ...")
    parser.add_argument("--seq-len", type=int, default=64, help="... x T tokens")
    parser.add_argument("--steps", type=int, default=5, help="timed steps per framework and variant")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--threads", type=int, default=None,
                        help="BLAS threads for all (minishare.set_num_threads, torch.set_num_threads); "
                             "default: what NumPy uses, i.e. OPENBLAS_NUM_THREADS or every core")
    parser.add_argument("--variants", default="all-shared")
    parser.add_argument("--mlm", choices=("masked", "all"), default="masked",
                        help="where minishare's MLM head runs: at the masked positions (as it trains) "
                             "or at all B x T, as Hugging Face's model does")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory processes")
    parser.add_argument("--profile", action="store_true",
                        help="profile minishare's steps with cProfile and print the top functions")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall: elapsed time (on a quiet machine); cpu: this process's CPU time, all "
                             "its threads (less disturbed by other jobs on a busy one; CPU only)")
    parser.add_argument("--no-anatomy", action="store_true",
                        help="skip the floor (the step's matrix products alone) and the profile by kind")
    parser.add_argument("--memory-of", help=argparse.SUPPRESS)   # in a child: {framework, shape, sharing}
    args = parser.parse_args()
    args.shapes = ({"custom": dict(preset=args.preset, vocab_size=args.vocab_size, batch_size=args.batch_size,
                                   seq_len=args.seq_len)} if args.preset else
                   {name: SHAPES[name] for name in args.shapes.split(",")})
    return args


ARGS = parse_args()

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import minishare  # noqa: E402
from minishare.analysis import count_parameters  # noqa: E402
from minishare import optim as ms_optim  # noqa: E402
from minishare.models import AlbertConfig, AlbertForPreTraining  # noqa: E402
import step_anatomy  # noqa: E402  (next to this script)

try:
    import torch
except ImportError:
    torch = None

LR, WEIGHT_DECAY = 1e-3, 0.01
CLOCK = step_anatomy.now = time.process_time if ARGS.clock == "cpu" else time.perf_counter


def blas_threads():
    if ARGS.threads:
        minishare.set_num_threads(ARGS.threads)
        return ARGS.threads
    try:
        return minishare.get_num_threads() or os.cpu_count()
    except ImportError:   # threadpoolctl is optional without --threads
        env = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS")
        return int(env) if env else os.cpu_count()


def make_batch(config, B, T, seed=0):
    """Random ids, 15% of positions with an MLM label, two segments, one padded tail per sequence;
    ``mlm_positions``: the flat positions of the labels, found on the host as the data pipeline
    (minishare.tasks) does."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(5, config.vocab_size, (B, T))
    lengths = rng.integers(T * 3 // 4, T + 1, B)
    mask = (np.arange(T)[None] < lengths[:, None]).astype(np.int64)
    token_types = (np.arange(T)[None] >= (lengths // 2)[:, None]).astype(np.int64) * mask
    labels = np.where((rng.random((B, T)) < 0.15) & (mask == 1), ids, -100)
    sop = rng.integers(0, 2, B)
    return dict(input_ids=ids, attention_mask=mask, token_type_ids=token_types, labels=labels,
                sentence_order_label=sop, mlm_positions=np.flatnonzero(labels != -100))


# ============================================================================ minishare
class MinishareStep:
    """``gather``: the MLM head at the masked positions only (``mlm_positions``); else at all."""

    def __init__(self, config, batch, gather=True):
        minishare.manual_seed(0)
        self.model = AlbertForPreTraining(config)
        self.batch = {k: minishare.tensor(v) for k, v in batch.items() if gather or k != "mlm_positions"}
        self.optimizer = ms_optim.AdamW(self.model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)

    def __call__(self):
        loss = self.forward_backward()
        self.update()
        return float(loss.item())

    def forward_backward(self):
        loss = self.model(**self.batch).loss
        loss.backward()
        return loss

    def update(self):
        self.optimizer.step()
        self.optimizer.zero_grad()


# ============================================================================== PyTorch
def torch_albert(config):
    """ALBERT for pre-training in PyTorch, with the reference implementation's layout and
    minishare's parameter names (so weights load by name): factorized embedding (V x E, LayerNorm
    over E, E -> H), Post-LN layers whose attention and FFN sets the plan assigns to positions
    (all-shared: one set reused N times), gelu tanh, pooler, MLM head tied to the word embeddings
    plus a V bias, SOP head."""
    nn, F = torch.nn, torch.nn.functional
    H, E, V, I = config.hidden_size, config.embedding_size, config.vocab_size, config.intermediate_size
    heads, eps = config.num_attention_heads, config.layer_norm_eps
    plan = config.plan()
    gelu = lambda x: F.gelu(x, approximate="tanh")

    class Embeddings(nn.Module):
        def __init__(self):
            super().__init__()
            self.word_embeddings = nn.Embedding(V, E)
            self.position_embeddings = nn.Embedding(config.max_position_embeddings, E)
            self.token_type_embeddings = nn.Embedding(config.type_vocab_size, E)
            self.LayerNorm = nn.LayerNorm(E, eps=eps)
            self.embedding_hidden_mapping_in = nn.Linear(E, H) if E != H else None

        def forward(self, ids, token_types):
            T = ids.shape[1]
            x = (self.word_embeddings(ids) + self.position_embeddings(torch.arange(T, device=ids.device))
                 + self.token_type_embeddings(token_types))
            x = self.LayerNorm(x)
            return x if self.embedding_hidden_mapping_in is None else self.embedding_hidden_mapping_in(x)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.query, self.key, self.value, self.dense = (nn.Linear(H, H) for _ in range(4))

        def forward(self, x, mask):
            B, T, _ = x.shape
            split = lambda t: t.view(B, T, heads, H // heads).transpose(1, 2)     # (B, h, T, d)
            q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
            scores = q @ k.transpose(-1, -2) / (H // heads) ** 0.5
            probs = scores.masked_fill(~mask, float("-inf")).softmax(-1)
            return self.dense((probs @ v).transpose(1, 2).reshape(B, T, H))

    class FFN(nn.Module):
        def __init__(self):
            super().__init__()
            self.ffn, self.ffn_output = nn.Linear(H, I), nn.Linear(I, H)

        def forward(self, x):
            return self.ffn_output(gelu(self.ffn(x)))

    class Residual(nn.Module):   # Post-LN: LN(x + f(x))
        def __init__(self, sublayer):
            super().__init__()
            self.sublayer, self.LayerNorm = sublayer, nn.LayerNorm(H, eps=eps)

        def forward(self, x, *args):
            return self.LayerNorm(x + self.sublayer(x, *args))

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention_sets = nn.ModuleList(Residual(Attention()) for _ in range(plan.n_sets("attention")))
            self.ffn_sets = nn.ModuleList(Residual(FFN()) for _ in range(plan.n_sets("ffn")))

        def forward(self, x, mask):
            for i in range(plan.n_layers):
                x = self.attention_sets[plan.index("attention", i)](x, mask)
                x = self.ffn_sets[plan.index("ffn", i)](x)
            return x

    class Albert(nn.Module):
        def __init__(self):
            super().__init__()
            self.embeddings, self.encoder, self.pooler = Embeddings(), Encoder(), nn.Linear(H, H)

    class MLMHead(nn.Module):
        def __init__(self, word_embeddings):
            super().__init__()
            self.dense, self.LayerNorm = nn.Linear(H, E), nn.LayerNorm(E, eps=eps)
            self.decoder = nn.Linear(E, V)
            self.decoder.weight = word_embeddings.weight          # tied: one tensor, two uses

        def forward(self, h):
            return self.decoder(self.LayerNorm(gelu(self.dense(h))))

    class AlbertForPreTraining(nn.Module):
        def __init__(self):
            super().__init__()
            self.albert = Albert()
            self.predictions = MLMHead(self.albert.embeddings.word_embeddings)
            self.sop_classifier = nn.Linear(H, 2)

        def forward(self, input_ids, attention_mask, token_type_ids, labels, sentence_order_label,
                    mlm_positions=None):
            mask = attention_mask.bool()[:, None, None, :]                       # (B, 1, 1, T)
            h = self.albert.encoder(self.albert.embeddings(input_ids, token_type_ids), mask)
            pooled = torch.tanh(self.albert.pooler(h[:, 0]))
            labels = labels.reshape(-1)                                          # (B·T,)
            if mlm_positions is None:      # Hugging Face: logits at every position, (B·T, V)
                logits = self.predictions(h).reshape(-1, V)
            else:                          # the reference's gather: (P, V) at the masked positions
                logits = self.predictions(h.reshape(-1, H)[mlm_positions])
                labels = labels[mlm_positions]
            mlm = F.cross_entropy(logits, labels, ignore_index=-100)
            return mlm + F.cross_entropy(self.sop_classifier(pooled), sentence_order_label)

    return AlbertForPreTraining()


class TorchStep:
    """``gather``: the MLM head at the masked positions only (minishare's algorithm); else at all
    positions (Hugging Face's). ``weights``: minishare's initial state (None: PyTorch's own init,
    enough where only memory is measured)."""

    def __init__(self, config, batch, weights, device, gather):
        self.model = torch_albert(config).to(device)
        if weights is not None:
            state = {name: torch.from_numpy(np.array(array, dtype=np.float32)) for name, array in weights.items()}
            self.model.load_state_dict(state, strict=True)
        assert self.model.predictions.decoder.weight is self.model.albert.embeddings.word_embeddings.weight
        self.batch = {k: torch.from_numpy(v).to(device) for k, v in batch.items()
                      if gather or k != "mlm_positions"}
        params = list(self.model.parameters())                      # PyTorch deduplicates too
        self.optimizer = torch.optim.AdamW(params, lr=LR, weight_decay=WEIGHT_DECAY)
        self.n_params = sum(p.numel() for p in params)

    def __call__(self):
        loss = self.model(**self.batch)
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        return float(loss.item())


# ============================================================================== timing
MLM_AT = {"masked": "the masked positions", "all": "all B x T"}
LABELS = {"minishare": "minishare (MLM head at {mlm})",
          "torch-hf": "PyTorch {device}, Hugging Face style (all B x T logits)",
          "torch-gather": "PyTorch {device}, the same gather as minishare"}


def torch_device():
    """PyTorch's device, the same kind as minishare's: CUDA when minishare runs on CuPy, else the
    CPU; None when PyTorch cannot match (no CUDA build), so no ratio is printed."""
    if torch is None:
        return None
    if minishare.backend.name == "cupy":
        return "cuda" if torch.cuda.is_available() else None
    return "cpu"


def synchronize():
    """Wait for both frameworks' queued GPU work (nothing to wait for on a CPU)."""
    minishare.backend.synchronize()
    if torch is not None and torch.cuda.is_available():
        torch.cuda.synchronize()


def timed(step):
    """(seconds, loss, minor page faults) of one step."""
    synchronize()
    faults, start = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, CLOCK()
    loss = step()
    synchronize()                  # the step's kernels, not only their launches
    return CLOCK() - start, loss, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults


def config_of(shape, sharing):
    return AlbertConfig.from_preset(shape["preset"], vocab_size=shape["vocab_size"], sharing=sharing,
                                    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                                    **shape.get("overrides", {}))


def build_steps(shape, sharing, device, weights_from_minishare=True, only=FRAMEWORKS):
    config = config_of(shape, sharing)
    batch = make_batch(config, shape["batch_size"], shape["seq_len"])
    steps = {}
    if "minishare" in only:
        steps["minishare"] = MinishareStep(config, batch, gather=ARGS.mlm == "masked")
    weights = None
    if weights_from_minishare:
        weights = {k: minishare.backend.to_numpy(v) for k, v in steps["minishare"].model.state_dict().items()}
    if device is not None:
        for name in ("torch-hf", "torch-gather"):
            if name in only:
                steps[name] = TorchStep(config, batch, weights, device, gather=name == "torch-gather")
    return config, batch, steps


def run_variant(shape_name, shape, sharing):
    device = torch_device()
    config, batch, steps = build_steps(shape, sharing, device)
    n_params = count_parameters(steps["minishare"].model)
    print(f"\n== {shape_name}, {sharing}: {shape['preset']} V={config.vocab_size} E={config.embedding_size} "
          f"H={config.hidden_size} N={config.num_hidden_layers} heads={config.num_attention_heads} "
          f"FFN={config.intermediate_size} act={config.hidden_act} Post-LN; batch "
          f"{shape['batch_size']} x {shape['seq_len']} tokens, {len(batch['mlm_positions'])} of them masked; "
          f"{n_params:,} parameters (AlbertForPreTraining, tied head); update: AdamW")
    for name, step in steps.items():
        if name != "minishare":
            assert step.n_params == n_params, (name, step.n_params, n_params)
    times, losses, faults = ({name: [] for name in steps} for _ in range(3))
    for i in range(ARGS.warmup + ARGS.steps):        # interleaved: a busy machine slows all alike
        for name, step in steps.items():
            t, loss, f = timed(step)
            losses[name].append(loss)
            if i >= ARGS.warmup:
                times[name].append(t)
                faults[name].append(f)
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    for name in steps:
        label = LABELS[name].format(device=device, mlm=MLM_AT[ARGS.mlm])
        print(f"{label:50s}: median {medians[name] * 1e3:8.1f} ms/step over "
              f"{len(times[name])} steps (min {min(times[name]) * 1e3:.1f}); first loss {losses[name][0]:.5f}; "
              f"{statistics.median(faults[name]):.0f} page faults/step")
    if device is None:
        print("PyTorch: not importable, or without CUDA while minishare runs on a GPU "
              "(pip install torch, a CUDA build for a GPU); no ratio")
        anatomy(steps["minishare"], medians)
        return medians, {}
    drift = max(abs(a - b) for name in steps for a, b in zip(losses["minishare"][:3], losses[name][:3]))
    print(f"same network: first 3 losses of all three agree to {drift:.1e} "
          f"({'ok' if drift < 1e-3 else 'MISMATCH: the models differ'})")
    print(f"time ratio  : minishare / PyTorch Hugging Face style = {medians['minishare'] / medians['torch-hf']:.2f}x, "
          f"minishare / PyTorch same gather = {medians['minishare'] / medians['torch-gather']:.2f}x")
    anatomy(steps["minishare"], medians)
    peaks = {} if ARGS.no_memory or device != "cpu" else measure_peaks(shape, sharing)
    if peaks:
        print(f"peak memory : minishare {peaks['minishare']:.1f} MB, PyTorch Hugging Face style "
              f"{peaks['torch-hf']:.1f} MB, same gather {peaks['torch-gather']:.1f} MB; ratios "
              f"{peaks['minishare'] / peaks['torch-hf']:.2f}x, {peaks['minishare'] / peaks['torch-gather']:.2f}x")
    return medians, peaks


def anatomy(step, medians):
    """The floor (the step's matrix products alone, back to back) into ``medians["floor"]``, and
    the profile of minishare's step by kind (``step_anatomy``)."""
    if ARGS.no_anatomy:
        return
    found = step_anatomy.floor(step, ARGS.steps)
    if found is None:
        print("floor       : not measured (the products are recorded on the NumPy backend only)")
    else:
        medians["floor"], count, gflop = found
        over = "".join(f", {name} {medians[name] / medians['floor']:.2f}x" for name in ("torch-gather",)
                       if name in medians)
        print(f"floor       : minishare's {count} matrix products ({gflop:.2f} GFLOP) alone, back to back: "
              f"{medians['floor'] * 1e3:.1f} ms; step / floor: minishare {medians['minishare'] / medians['floor']:.2f}x"
              f"{over} (PyTorch doing the same gather)")
    seconds = step_anatomy.profile(step.forward_backward, step.update, max(ARGS.steps, 2))
    step_anatomy.print_profile(seconds, medians["minishare"])


# ============================================================================== memory
def _proc_status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024          # kB -> bytes
    raise OSError(f"no {field} in /proc/self/status")


def memory_child(spec):
    """In a fresh process: the peak resident memory of one framework's steady step above what the
    imports take (see the module docstring), printed as JSON."""
    spec = json.loads(spec)
    framework, shape, sharing = spec["framework"], spec["shape"], spec["sharing"]
    if ARGS.threads:
        blas_threads()
        if torch is not None:
            torch.set_num_threads(ARGS.threads)
    # Frameworks initialize lazily (PyTorch imports its optimizers' helpers and sets up its
    # kernels on the first step): two steps of a tiny model first, so that is not counted.
    tiny = dict(preset="albert-tiny", vocab_size=100, batch_size=2, seq_len=8)
    warm = build_steps(tiny, sharing, "cpu", weights_from_minishare=False, only=(framework,))[2][framework]
    warm()
    warm()
    del warm
    gc.collect()
    before = _proc_status("RssAnon")
    _, _, steps = build_steps(shape, sharing, "cpu", weights_from_minishare=False, only=(framework,))
    step = steps[framework]
    step()
    gc.collect()
    with open("/proc/self/clear_refs", "w") as f:   # 5: reset the high-water mark to the current RSS
        f.write("5")
    file_pages = _proc_status("RssFile") + _proc_status("RssShmem")
    step()
    step()
    # The mark counts every resident page, the libraries' code too (PyTorch's is large, and pages
    # in as its ops first run); those pages are file-backed, resident since the first step:
    # subtracting them leaves the peak of the data (anonymous) pages.
    file_pages = min(file_pages, _proc_status("RssFile") + _proc_status("RssShmem"))
    print(json.dumps({"peak_bytes": _proc_status("VmHWM") - file_pages - before}))


def measure_peaks(shape, sharing):
    """{framework: MB} from one child process each; {} where /proc cannot reset the mark."""
    if not os.path.exists("/proc/self/clear_refs"):
        print("peak memory : not measured (needs Linux's /proc/self/clear_refs)")
        return {}
    peaks = {}
    for framework in FRAMEWORKS:
        spec = json.dumps(dict(framework=framework, shape=shape, sharing=sharing))
        command = [sys.executable, os.path.abspath(__file__), "--memory-of", spec, "--mlm", ARGS.mlm] + (
            ["--threads", str(ARGS.threads)] if ARGS.threads else [])
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"the peak-memory process of {framework} failed:\n{done.stderr}")
        peaks[framework] = json.loads(done.stdout.strip().splitlines()[-1])["peak_bytes"] / 2**20
    return peaks


def profile(shape, sharing):
    import cProfile
    import pstats
    config = config_of(shape, sharing)
    step = MinishareStep(config, make_batch(config, shape["batch_size"], shape["seq_len"]),
                         gather=ARGS.mlm == "masked")
    step()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(max(ARGS.steps // 2, 3)):
        step()
    profiler.disable()
    print(f"\n== cProfile of minishare's {sharing} step (tottime: time inside the function itself)")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


def main():
    minishare.backend.keep_freed_memory()    # as minishare's training runs do (see the module docstring)
    if ARGS.memory_of:
        return memory_child(ARGS.memory_of)
    threads = blas_threads()
    if torch is not None:
        torch.set_num_threads(threads)
        torch.manual_seed(0)
    print(f"numpy {np.__version__}, BLAS threads {threads}; "
          f"torch {torch.__version__ + f' (threads {torch.get_num_threads()})' if torch else 'not installed'}; "
          f"minishare backend {minishare.backend.name}, "
          f"{'reference' if minishare.backend.reference_ops else 'fast'} ops; clock {ARGS.clock}; load average "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    results = [(shape_name, sharing, *run_variant(shape_name, shape, sharing))
               for shape_name, shape in ARGS.shapes.items() for sharing in ARGS.variants.split(",")]
    print("\nsummary (ratio = minishare / PyTorch; lower is better, 1.0 = parity; "
          "HF = PyTorch as Hugging Face writes it, gather = PyTorch with minishare's gather)")
    for shape_name, sharing, medians, peaks in results:
        line = f"  {sharing:<12} {shape_name:<6} time: minishare {medians['minishare'] * 1e3:8.1f} ms"
        if "floor" in medians:
            line += (f"  floor {medians['floor'] * 1e3:8.1f} ms  step/floor "
                     f"{medians['minishare'] / medians['floor']:.2f}x")
        if "torch-hf" in medians:
            line += (f"  HF {medians['torch-hf'] * 1e3:8.1f} ms  ratio {medians['minishare'] / medians['torch-hf']:.2f}x"
                     f"  gather {medians['torch-gather'] * 1e3:8.1f} ms  ratio "
                     f"{medians['minishare'] / medians['torch-gather']:.2f}x")
        if peaks:
            line += (f" | peak memory: minishare {peaks['minishare']:.0f} MB  HF {peaks['torch-hf']:.0f} MB  ratio "
                     f"{peaks['minishare'] / peaks['torch-hf']:.2f}x  gather {peaks['torch-gather']:.0f} MB  "
                     f"ratio {peaks['minishare'] / peaks['torch-gather']:.2f}x")
        print(line)
    if ARGS.profile:
        shape_name, shape = next(iter(ARGS.shapes.items()))
        profile(shape, ARGS.variants.split(",")[0])


if __name__ == "__main__":
    main()
