"""Compute per token, counted from a configuration: what sharing does not save.

Sharing stores fewer weights, but every one of the N layer positions still runs its matrix
products, so the compute of a forward pass depends on N, H, the FFN width and the sequence length
T, never on how many distinct sets M serve the positions. ALBERT-xxlarge (H = 4,096, 12 layers)
holds fewer parameters than BERT-large (H = 1,024, 24 layers) and is slower to train (Lan et al.,
2019: about 3 times slower); this module says how much more it computes.

Conventions (stated once, used everywhere here):

- A multiply-accumulate (MAC) is one multiplication and one addition; FLOPs = 2 × MACs.
- Only matrix products are counted. LayerNorm, softmax, GELU, biases and residual additions cost
  O(H) (or O(T) per head) per token against O(H²) for the products, and embedding lookups copy
  rows without arithmetic; they are left out.
- Per token: a product applied to every token counts its MACs once per token; the pooler and the
  sentence-order classifier run once per sequence, so they count 1/T of theirs.
- Training ≈ 3 × forward: backward runs two products for every forward one (the gradient with
  respect to the input and with respect to the weight), the update is O(parameters) per step and
  is left out. This is the usual estimate (e.g. Kaplan et al., 2020, "Scaling laws", Sec. 2.1).

Per token, for an ALBERT/BERT encoder with N positions, E, H, FFN width I, V and length T::

    embedding projection     E·H              (absent when E = H: BERT)
    attention projections    N · 4H²          (query, key, value, output)
    attention scores         N · 2TH          (q·k against T keys, then the T weights times values)
    FFN                      N · 2HI          (H -> I -> H)
    MLM head                 H·E + E·V        (dense H -> E, then scores against V word vectors)
    pooler and classifier    (H² + 2H) / T    (once per sequence, on the first token)
"""
from minishare.checks import is_int
from minishare.models import AlbertConfig

FLOPS_PER_MAC = 2
TRAINING_FACTOR = 3        # forward + backward ≈ 3 × forward (see the module docstring)
PARTS = ("embedding projection", "attention projections", "attention scores", "FFN", "MLM head",
         "pooler and classifier")


def macs_per_token(config, seq_len=512, heads=True):
    """Forward multiply-accumulates per token of an ``AlbertConfig`` at sequence length ``seq_len``
    (T), by part (``PARTS``) and ``"total"``; ``heads=False`` leaves out the MLM head, pooler and
    classifier (the encoder alone). Floats, because the per-sequence parts divide by T. Sharing
    does not enter: every position computes."""
    if not isinstance(config, AlbertConfig):
        raise TypeError(f"macs_per_token needs an AlbertConfig, got {type(config).__name__}")
    if not is_int(seq_len) or seq_len < 1:
        raise ValueError(f"macs_per_token: seq_len must be a positive int, got {seq_len!r}")
    V, E, H, I = config.vocab_size, config.embedding_size, config.hidden_size, config.intermediate_size
    N, T = config.num_hidden_layers, seq_len
    parts = {
        "embedding projection": E * H if config.has_embedding_projection else 0,
        "attention projections": N * 4 * H * H,
        "attention scores": N * 2 * T * H,
        "FFN": N * 2 * H * I,
        "MLM head": H * E + E * V if heads else 0,
        "pooler and classifier": (H * H + 2 * H) / T if heads else 0,
    }
    parts["total"] = sum(parts.values())
    return parts


def flops_per_token(config, seq_len=512, training=False):
    """FLOPs per token: 2 × ``macs_per_token(...)["total"]``, times 3 for a training step."""
    return FLOPS_PER_MAC * macs_per_token(config, seq_len)["total"] * (TRAINING_FACTOR if training else 1)


def preset_table(names=("bert-base", "bert-large", "albert-base", "albert-large", "albert-xlarge",
                        "albert-xxlarge"), seq_len=512, reference="bert-large"):
    """One row per preset: {"name", "parameters", "forward_gflops", "training_gflops" (per token),
    "flops_vs_<reference>", "params_vs_<reference>"}; the reference's row has ratios 1."""
    from minishare.analysis.params import count_parameters
    rows = []
    for name in names:
        config = AlbertConfig.from_preset(name)
        rows.append({"name": name, "parameters": count_parameters(config),
                     "forward_gflops": flops_per_token(config, seq_len) / 1e9,
                     "training_gflops": flops_per_token(config, seq_len, training=True) / 1e9})
    ref = next((r for r in rows if r["name"] == reference), None)
    if ref is None:
        raise ValueError(f"preset_table: the reference {reference!r} is not among {names}")
    for r in rows:
        r[f"flops_vs_{reference}"] = r["forward_gflops"] / ref["forward_gflops"]
        r[f"params_vs_{reference}"] = r["parameters"] / ref["parameters"]
    return rows
