"""Experiment "memory": what sharing saves and what it does not. For ALBERT's four variants, the
bytes of parameters, gradients, optimizer state and activations of one training step; then step
time and inference time against depth, shared against not shared. Sharing shrinks the first three
(they scale with the number of distinct tensors), not the activations or the time (they scale with
the number of layer positions computed)."""
import numpy   # host-side synthetic batch

from minishare import optim, random as ms_random
from minishare.analysis import count_parameters, memory, plots
from minishare.models import AlbertConfig, AlbertForPreTraining

VARIANTS = ("not-shared", "all-shared", "shared-attention", "shared-ffn")


def _batch(config, settings, seed=0):
    """A random pre-training batch: memory and time do not depend on what the tokens say."""
    rng = numpy.random.default_rng(seed)
    B, T, V = settings.batch_size, settings.seq_len, config.vocab_size
    ids = rng.integers(5, V, (B, T))
    return dict(input_ids=ids, attention_mask=numpy.ones((B, T), dtype=numpy.int64),
                token_type_ids=numpy.zeros((B, T), dtype=numpy.int64),
                labels=numpy.where(rng.random((B, T)) < 0.15, ids, -100),
                sentence_order_label=rng.integers(0, 2, B))


def _measure(config, settings):
    ms_random.manual_seed(0)
    model = AlbertForPreTraining(config)
    optimizer = optim.AdamW(model.parameters(), lr=1e-3)
    batch = _batch(config, settings)

    def loss_fn(m):
        return m(**batch).loss
    bytes_ = memory.memory_breakdown(model, optimizer, loss_fn)
    times = memory.step_time(model, loss_fn, optimizer, repeats=settings.timing_repeats, warmup=1)
    return {"params": count_parameters(model), "bytes": bytes_, "time": times}


def run(out, settings, progress=True):
    base = dict(vocab_size=settings.vocab_size, max_position_embeddings=128, **settings.albert)
    variants = {name: _measure(AlbertConfig.from_preset("albert-tiny", **{**base, "sharing": name}), settings)
                for name in VARIANTS}
    sweep = {name: [_measure(AlbertConfig.from_preset("albert-tiny", **{**base, "sharing": name,
                                                                       "num_hidden_layers": N}), settings)
                    for N in settings.depths]
             for name in ("not-shared", "all-shared")}
    return {"variants": variants, "depths": list(settings.depths), "sweep": sweep}


def figures(result, folder):
    rows = [(name, r["bytes"]) for name, r in result["variants"].items()]
    series = {name: [m["time"] for m in ms] for name, ms in result["sweep"].items()}
    return [
        ("Bytes of one training step by kind: sharing shrinks parameters, gradients and optimizer state",
         plots.save_figure(plots.plot_memory(rows), f"{folder}/memory")),
        ("Training-step and inference time against depth: shared and not-shared cost the same",
         plots.save_figure(plots.plot_step_time(result["depths"], series), f"{folder}/time_vs_depth")),
    ]


def _mib(n):
    return f"{n / 2 ** 20:.2f}"


def report(result, figs):
    kinds = ("parameters", "gradients", "optimizer", "activations")
    lines = ["| variant | parameters | " + " | ".join(f"{k} (MiB)" for k in kinds) +
             " | step (s) | inference (s) |", "|---" * (len(kinds) + 4) + "|"]
    for name, r in result["variants"].items():
        lines.append(f"| {name} | {r['params']:,} | " + " | ".join(_mib(r["bytes"][k]) for k in kinds) +
                     f" | {r['time']['train']:.3f} | {r['time']['inference']:.3f} |")
    lines += ["", "| N | " + " | ".join(f"{name} step (s) | {name} inference (s)" for name in result["sweep"]) + " |",
              "|---" * (1 + 2 * len(result["sweep"])) + "|"]
    for i, N in enumerate(result["depths"]):
        lines.append(f"| {N} | " + " | ".join(f"{ms[i]['time']['train']:.3f} | {ms[i]['time']['inference']:.3f}"
                                                for ms in result["sweep"].values()) + " |")
    return "\n".join(lines)


def observations(result):
    v = result["variants"]
    ns, sh = v["not-shared"], v["all-shared"]
    deep = {name: ms[-1]["time"] for name, ms in result["sweep"].items()}
    return [f"all-shared keeps {ns['bytes']['parameters'] / sh['bytes']['parameters']:.1f}× fewer parameter "
            f"bytes and {ns['bytes']['optimizer'] / max(sh['bytes']['optimizer'], 1):.1f}× less optimizer state "
            f"than not-shared, but {sh['bytes']['activations'] / ns['bytes']['activations']:.2f}× the activations.",
            f"At N = {result['depths'][-1]}, inference takes {deep['all-shared']['inference'] / deep['not-shared']['inference']:.2f}× "
            "as long shared as not shared: sharing does not make inference faster."]
