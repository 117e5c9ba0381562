"""Time one ALBERT pre-training step in minishare and in PyTorch eager, on the same model and batch.

    python benchmarks/step_time.py                      # albert-tiny, V = 2000, batch 16 x 64 tokens
    python benchmarks/step_time.py --threads 1 --steps 20
    python benchmarks/step_time.py --profile            # also: where minishare's step spends its time

A step is what training repeats: forward (embeddings, N encoder positions, MLM head tied to the word
embeddings, SOP head, both losses), backward, and an AdamW update. Both frameworks run float32 on
the same kind of device: on the CPU with the same number of BLAS threads, or, with
``MINISHARE_BACKEND=cupy``, minishare on CuPy against PyTorch on CUDA (never a GPU against a CPU);
on a GPU the clock is read only after both have finished their queued kernels. They run one after
the other in this process (their steps are
interleaved, so a busy machine slows both alike), starting from the same weights: the first losses
must agree, which checks that the PyTorch model below is the same network. Reported: the median
over ``--steps`` steps after ``--warmup``, and the ratio minishare / PyTorch. Absolute times depend
on the machine; the ratio is what to compare (DEVELOPERS.md: speed is measured as ratios).

Two variants: ``all-shared`` (ALBERT: one attention and one FFN set serve every position) and
``not-shared`` (BERT-style: one set per position). Sharing changes the parameter count and the
optimizer's work, not the forward and backward computation.
"""
import argparse
import os
import statistics
import sys
import time


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", default="albert-tiny")
    parser.add_argument("--vocab-size", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--seq-len", type=int, default=64)
    parser.add_argument("--steps", type=int, default=10, help="timed steps per framework and variant")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", type=int, default=None,
                        help="BLAS threads for both (default: what NumPy uses, i.e. "
                             "OPENBLAS_NUM_THREADS / OMP_NUM_THREADS or every core)")
    parser.add_argument("--variants", default="all-shared,not-shared")
    parser.add_argument("--profile", action="store_true",
                        help="profile minishare's steps with cProfile and print the top ops")
    return parser.parse_args()


ARGS = parse_args()
if ARGS.threads:   # must happen before NumPy (and its BLAS) is imported
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(ARGS.threads)

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import minishare  # noqa: E402
from minishare.analysis import count_parameters  # noqa: E402
from minishare import optim as ms_optim  # noqa: E402
from minishare.models import AlbertConfig, AlbertForPreTraining  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

LR, WEIGHT_DECAY = 1e-3, 0.01


def blas_threads():
    if ARGS.threads:
        return ARGS.threads
    try:
        from threadpoolctl import threadpool_info
        return max(info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas")
    except Exception:   # threadpoolctl is optional
        env = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS")
        return int(env) if env else os.cpu_count()


def make_batch(config, B, T, seed=0):
    """Random ids, 15% of positions with an MLM label, two segments, one padded tail per sequence."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(5, config.vocab_size, (B, T))
    lengths = rng.integers(T * 3 // 4, T + 1, B)
    mask = (np.arange(T)[None] < lengths[:, None]).astype(np.int64)
    token_types = (np.arange(T)[None] >= (lengths // 2)[:, None]).astype(np.int64) * mask
    labels = np.where((rng.random((B, T)) < 0.15) & (mask == 1), ids, -100)
    sop = rng.integers(0, 2, B)
    return dict(input_ids=ids, attention_mask=mask, token_type_ids=token_types, labels=labels,
                sentence_order_label=sop)


# ============================================================================ minishare
class MinishareStep:
    def __init__(self, config, batch):
        minishare.manual_seed(0)
        self.model = AlbertForPreTraining(config)
        self.batch = {k: minishare.tensor(v) for k, v in batch.items()}
        self.optimizer = ms_optim.AdamW(self.model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)

    def __call__(self):
        loss = self.model(**self.batch).loss
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        return float(loss.item())


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

        def forward(self, input_ids, attention_mask, token_type_ids, labels, sentence_order_label):
            mask = attention_mask.bool()[:, None, None, :]                       # (B, 1, 1, T)
            h = self.albert.encoder(self.albert.embeddings(input_ids, token_type_ids), mask)
            pooled = torch.tanh(self.albert.pooler(h[:, 0]))
            logits = self.predictions(h)
            mlm = F.cross_entropy(logits.reshape(-1, V), labels.reshape(-1), ignore_index=-100)
            return mlm + F.cross_entropy(self.sop_classifier(pooled), sentence_order_label)

    return AlbertForPreTraining()


class TorchStep:
    def __init__(self, config, batch, weights, device):
        self.model = torch_albert(config).to(device)
        state = {name: torch.from_numpy(np.array(array, dtype=np.float32)) for name, array in weights.items()}
        self.model.load_state_dict(state, strict=True)
        assert self.model.predictions.decoder.weight is self.model.albert.embeddings.word_embeddings.weight
        self.batch = {k: torch.from_numpy(v).to(device) for k, v in batch.items()}
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
    synchronize()
    start = time.perf_counter()
    loss = step()
    synchronize()                  # the step's kernels, not only their launches
    return time.perf_counter() - start, loss


def run_variant(sharing, threads):
    config = AlbertConfig.from_preset(ARGS.preset, vocab_size=ARGS.vocab_size, sharing=sharing,
                                      hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    batch = make_batch(config, ARGS.batch_size, ARGS.seq_len)
    ms = MinishareStep(config, batch)
    n_params = count_parameters(ms.model)
    print(f"\n== {sharing}: {ARGS.preset} V={config.vocab_size} E={config.embedding_size} "
          f"H={config.hidden_size} N={config.num_hidden_layers} heads={config.num_attention_heads} "
          f"FFN={config.intermediate_size} act={config.hidden_act} Post-LN; batch "
          f"{ARGS.batch_size} x {ARGS.seq_len} tokens; {n_params:,} parameters "
          f"(AlbertForPreTraining, tied head); update: AdamW")
    tm, device = None, torch_device()
    if device is not None:
        weights = {k: minishare.backend.to_numpy(v) for k, v in ms.model.state_dict().items()}
        tm = TorchStep(config, batch, weights, device)
        assert tm.n_params == n_params, (tm.n_params, n_params)
    ms_times, torch_times, ms_losses, torch_losses = [], [], [], []
    for i in range(ARGS.warmup + ARGS.steps):        # interleaved: a busy machine slows both alike
        t, loss = timed(ms)
        ms_losses.append(loss)
        if i >= ARGS.warmup:
            ms_times.append(t)
        if tm is not None:
            t, loss = timed(tm)
            torch_losses.append(loss)
            if i >= ARGS.warmup:
                torch_times.append(t)
    ms_median = statistics.median(ms_times)
    print(f"minishare      : median {ms_median * 1e3:8.1f} ms/step over {len(ms_times)} steps "
          f"(min {min(ms_times) * 1e3:.1f}); first loss {ms_losses[0]:.5f}")
    if tm is None:
        print("PyTorch        : not importable, or without CUDA while minishare runs on a GPU "
              "(pip install torch, a CUDA build for a GPU); no ratio")
        return sharing, ms_median, None
    torch_median = statistics.median(torch_times)
    print(f"PyTorch {device:6s}: median {torch_median * 1e3:8.1f} ms/step over {len(torch_times)} steps "
          f"(min {min(torch_times) * 1e3:.1f}); first loss {torch_losses[0]:.5f}")
    drift = max(abs(a - b) for a, b in zip(ms_losses[:3], torch_losses[:3]))
    print(f"same network   : first 3 losses agree to {drift:.1e} "
          f"({'ok' if drift < 1e-3 else 'MISMATCH: the two models differ'})")
    print(f"ratio          : minishare / PyTorch = {ms_median / torch_median:.2f}x")
    return sharing, ms_median, torch_median


def profile(sharing):
    import cProfile
    import pstats
    config = AlbertConfig.from_preset(ARGS.preset, vocab_size=ARGS.vocab_size, sharing=sharing)
    step = MinishareStep(config, make_batch(config, ARGS.batch_size, ARGS.seq_len))
    step()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(max(ARGS.steps // 2, 3)):
        step()
    profiler.disable()
    print(f"\n== cProfile of minishare's {sharing} step (tottime: time inside the function itself)")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


def main():
    threads = blas_threads()
    if torch is not None:
        torch.set_num_threads(threads)
        torch.manual_seed(0)
    print(f"numpy {np.__version__}, BLAS threads {threads}; "
          f"torch {torch.__version__ + f' (threads {torch.get_num_threads()})' if torch else 'not installed'}; "
          f"minishare backend {minishare.backend.name}")
    results = [run_variant(s, threads) for s in ARGS.variants.split(",")]
    print("\nsummary (ratio = minishare time / PyTorch time; lower is better, 1.0 = parity)")
    for sharing, ms_t, torch_t in results:
        ratio = f"{ms_t / torch_t:.2f}x" if torch_t else "n/a"
        torch_text = f"{torch_t * 1e3:7.1f} ms" if torch_t else "    n/a"
        print(f"  {sharing:<12} minishare {ms_t * 1e3:7.1f} ms   PyTorch {torch_text}   ratio {ratio}")
    if ARGS.profile:
        profile(ARGS.variants.split(",")[0])


if __name__ == "__main__":
    main()
